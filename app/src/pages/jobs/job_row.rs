//! One row of the Jobs table.

use leptos::prelude::*;
use leptos_router::components::A;
use pipeline::dto::JobView;

use crate::components::format::{seconds, short_id};
use crate::components::job_status::JobStatus;

/// A job: its short id (a link to its page), kind, status, lane, model, elapsed time and cost.
#[component]
pub fn JobRow(j: JobView) -> impl IntoView {
    let cost = match j.spend.cost_unknown {
        true => "?".to_string(),
        false => j.spend.cost_text(),
    };
    let (testid, href, short) = (
        format!("jobrow-{}", j.id),
        format!("/ui/jobs/{}", j.id),
        short_id(&j.id),
    );
    view! {
        <tr data-testid=testid>
            <td><A href=href>{short}</A></td>
            <td>{j.kind.as_str()}</td>
            <td><JobStatus status=j.status /></td>
            <td>{j.priority.as_str()}</td>
            <td>{j.model}</td>
            <td class="num">{seconds(j.elapsed_ms)}</td>
            <td class="num">{cost}</td>
        </tr>
    }
}
