//! What the Dashboard's panels below its first screen share with the page and with what stands
//! in for them until their chunk has come ([`super::below`]): what they read of the page, and
//! their headings and loading lines, one list for both.

use leptos::prelude::*;
use pipeline::ops::route_health::RoutesReport;

use crate::api::ApiError;
use crate::components::layout::Health;

/// What the panels read of the Dashboard: its refresh tick, the frame's health report and the
/// routes' report (the status line reads it too).
#[derive(Clone, Copy)]
pub struct Shared {
    pub tick: RwSignal<u32>,
    pub health: Health,
    pub routes: LocalResource<Result<RoutesReport, ApiError>>,
}

/// A panel's heading, the anchor the section links jump to, and the line it shows until its
/// first answer.
pub(super) struct Panel {
    pub anchor: Option<&'static str>,
    pub heading: &'static str,
    pub loading: &'static str,
}

pub(super) const ROUTES: Panel = Panel {
    anchor: Some("routes"),
    heading: "Routes: the Anthropic API, Bedrock, Vertex AI",
    loading: "Loading the routes…",
};
pub(super) const ROLLOUT: Panel = Panel {
    anchor: Some("routing"),
    heading: "Rollout: direct and queue path",
    loading: "Loading the rollout…",
};
pub(super) const ROUTING: Panel = Panel {
    anchor: None,
    heading: "Deadline routing",
    loading: "Loading the routing figures…",
};
pub(super) const TAGS: Panel = Panel {
    anchor: Some("cost"),
    heading: "Cost by tag, every user",
    loading: "Loading tags…",
};
pub(super) const CACHE: Panel = Panel {
    anchor: None,
    heading: "Prompt cache, every user",
    loading: "Loading cache use…",
};
pub(super) const RECONCILIATION: Panel = Panel {
    anchor: None,
    heading: "Reconciliation with Anthropic's bill",
    loading: "Loading the reconciliation…",
};
pub(super) const HEALTH: Panel = Panel {
    anchor: Some("health"),
    heading: "Health",
    loading: "Asking the Worker…",
};

pub(super) fn heading(p: &Panel) -> impl IntoView {
    view! { <h2 id=p.anchor>{p.heading}</h2> }
}

/// "Check again": refreshes the frame's health report (the header's badge reads it too).
pub(super) fn check_again(health: Health) -> impl IntoView {
    view! {
        <div class="toolbar">
            <button data-testid="refresh-health" on:click=move |_| health.refetch()>
                "Check again"
            </button>
        </div>
    }
}
