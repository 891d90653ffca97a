//! Refusal fallback's effects (issue 33, part 3; `pipeline::refusal` decides): a refused answer
//! whose job has a fallback is kept apart in R2 (create-if-absent, before any row changes), and
//! the job goes back to `queued` on the fallback model in one guarded statement — the refused
//! attempt's usage and cost kept on the row and counted under the model that refused.

use pipeline::answer::answer_cost;
use pipeline::anthropic::Message;
use pipeline::dto::RefusalView;
use pipeline::dto::Spend;
use pipeline::pricing::Tier;
use pipeline::refusal::{after_answer, refused_key, AfterRefusal};

use crate::services::AppState;
use crate::store::lifecycle::Scope;
use crate::store::{JobRow, Statement};

/// A refused answer of `row`'s attempt `n` on `model`, with where it goes next.
pub struct Refused<'a> {
    pub row: &'a JobRow,
    pub model: &'a str,
    pub message: &'a Message,
    pub n: u32,
    pub tier: Tier,
    pub to: String,
}

/// The fallback an answer of `row`'s call on `model` moves the job to: `None` for any answer
/// but a refusal that has one (and the job has not fallen back already).
pub fn fallback_of(
    state: &AppState,
    row: &JobRow,
    model: &str,
    message: &Message,
) -> Option<String> {
    match after_answer(
        message,
        model,
        row.fallback_model.as_deref(),
        &state.config.refusal_fallbacks,
        row.refusal.is_some(),
    )? {
        AfterRefusal::FallBack { to } => Some(to),
        AfterRefusal::Fail => None,
    }
}

impl Refused<'_> {
    /// The refused attempt as the row keeps it, settled at `now`.
    pub fn view(&self, now: i64) -> RefusalView {
        let cost = answer_cost(self.message, self.tier, now);
        RefusalView {
            model: self.model.to_owned(),
            n: self.n,
            at: now,
            stop_details: self.message.stop_details.clone(),
            fallback_model: self.to.clone(),
            result_key: refused_key(&self.row.id),
            spend: Spend::of(&self.message.usage, cost),
        }
    }

    /// Keeps the refused answer in R2 and answers the statement that moves the job to its
    /// fallback (to run alone, or with a chunk of a batch's results).
    pub async fn keep(
        &self,
        state: &AppState,
        scope: Scope<'_>,
        now: i64,
    ) -> worker::Result<Statement> {
        state
            .blobs
            .store_refused(&self.row.id, self.message)
            .await?;
        state
            .store
            .fall_back(&self.row.id, &self.view(now), now, scope)
    }
}
