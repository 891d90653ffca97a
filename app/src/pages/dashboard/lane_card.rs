//! One lane's card on the dashboard.

use leptos::prelude::*;
use pipeline::ops::metrics::LaneMetrics;

use super::series::ms_or_dash;

/// A lane: queued and in flight, and its oldest pending job. Lanes carry both paths' work, so
/// they have no threshold of their own: the path panels judge the waits.
#[component]
pub fn LaneCard(lane: LaneMetrics) -> impl IntoView {
    let name = lane.lane.as_str();
    view! {
        <div class="kpi lane" data-testid=format!("lane-{name}")>
            <span class="kpi-label">{format!("{name} lane")}</span>
            <strong>{format!("{} queued · {} in flight", lane.queued, lane.in_flight)}</strong>
            <span class="muted">{format!("oldest pending {}", ms_or_dash(lane.oldest_pending_ms))}</span>
        </div>
    }
}
