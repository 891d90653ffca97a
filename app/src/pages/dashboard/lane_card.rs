//! One lane's card on the dashboard.

use leptos::prelude::*;
use pipeline::ops::metrics::{LaneMetrics, OLDEST_PENDING_ALERT_MS};

use super::series::ms_or_dash;

/// A lane: queued and in flight, and its oldest pending job (`over` past the alert threshold).
#[component]
pub fn LaneCard(lane: LaneMetrics) -> impl IntoView {
    let over = lane
        .oldest_pending_ms
        .is_some_and(|a| a > OLDEST_PENDING_ALERT_MS);
    let name = lane.lane.as_str();
    view! {
        <div class=if over { "kpi lane over" } else { "kpi lane" } data-testid=format!("lane-{name}")>
            <span class="kpi-label">{format!("{name} lane")}</span>
            <strong>{format!("{} queued · {} in flight", lane.queued, lane.in_flight)}</strong>
            <span class="muted">{format!("oldest pending {}", ms_or_dash(lane.oldest_pending_ms))}</span>
        </div>
    }
}
