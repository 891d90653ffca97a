//! The dead-letter triage's mutations, shared by the page and its rows.

use leptos::prelude::*;
use pipeline::ops::dlq::{DlqFilter, ReplayAck, ReplayEdit};

use crate::api::{self, ApiError, Discarded};

/// Replays one job, with optional edits.
pub type Replay = Action<(String, Option<ReplayEdit>), Result<ReplayAck, ApiError>>;
/// Takes one job out of the triage list.
pub type Discard = Action<String, Result<Discarded, ApiError>>;
/// Replays every job matching a filter (up to 100).
pub type BulkReplay = Action<DlqFilter, Result<ReplayAck, ApiError>>;

pub fn replay() -> Replay {
    Action::new_local(|(id, edit): &(String, Option<ReplayEdit>)| {
        let (id, edit) = (id.clone(), edit.clone());
        async move { api::replay_dlq(&id, edit.as_ref()).await }
    })
}

pub fn discard() -> Discard {
    Action::new_local(|id: &String| {
        let id = id.clone();
        async move { api::discard_dlq(&id).await }
    })
}

pub fn bulk_replay() -> BulkReplay {
    Action::new_local(|f: &DlqFilter| {
        let f = f.clone();
        async move { api::replay_matching(&f).await }
    })
}

/// The latest outcome of `action` decides the page's message: its error, or none.
pub fn report_outcome<I, T>(action: Action<I, Result<T, ApiError>>, error: RwSignal<Option<String>>)
where
    I: Send + Sync + 'static,
    T: Clone + Send + Sync + 'static,
{
    Effect::new(move |_| {
        if let Some(r) = action.value().get() {
            error.set(r.err().map(|e| e.to_string()));
        }
    });
}
