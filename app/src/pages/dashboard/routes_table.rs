//! The Routes panel (issue 36): each configured route in failover order — its breaker (the
//! worst of its models'), its calls and error rate over the last hour, what its jobs cost in
//! that hour — and each breaker that is not closed, with its model and since when
//! (`GET /api/routes`).

use leptos::prelude::*;
use pipeline::breaker::Phase;
use pipeline::decimal::fixed;
use pipeline::ops::route_health::{RouteHealth, RoutesReport};

use crate::components::format::when;

fn phase(p: Phase) -> &'static str {
    match p {
        Phase::Closed => "closed",
        Phase::HalfOpen => "half-open",
        Phase::Open => "open",
    }
}

fn route_row(r: RouteHealth) -> impl IntoView {
    let class = if r.phase == Phase::Closed {
        "ok"
    } else {
        "alert"
    };
    let name = if r.regional {
        format!("{} (regional, +10%)", r.name)
    } else {
        r.name.clone()
    };
    let rate = if r.calls == 0 {
        "–".to_string()
    } else {
        format!("{} %", fixed(r.error_rate * 100.0, 0))
    };
    view! {
        <tr data-testid="route-row" data-route=r.route.as_str()>
            <th scope="row">{name}</th>
            <td class=class data-testid="route-phase">{phase(r.phase)}</td>
            <td class="num">{r.calls}</td>
            <td class="num" data-testid="route-error-rate">{rate}</td>
            <td class="num">{r.jobs}</td>
            <td class="num" data-testid="route-cost">{r.cost_micros.usd()}</td>
        </tr>
    }
}

#[component]
pub fn RoutesTable(r: RoutesReport) -> impl IntoView {
    let open: Vec<_> = r
        .routes
        .iter()
        .flat_map(|route| {
            let name = route.name.clone();
            route
                .breakers
                .iter()
                .filter(|b| b.phase != Phase::Closed)
                .map(move |b| (name.clone(), b.clone()))
        })
        .collect();
    let caption = format!(
        "Routes in failover order, over the last {} minutes",
        r.window_s / 60
    );
    view! {
        <table class="grid" data-testid="routes">
            <caption>{caption}</caption>
            <thead>
                <tr>
                    <th scope="col">"Route"</th>
                    <th scope="col">"Breaker"</th>
                    <th scope="col" class="num">"Calls"</th>
                    <th scope="col" class="num">"Errors"</th>
                    <th scope="col" class="num">"Jobs"</th>
                    <th scope="col" class="num">"Cost"</th>
                </tr>
            </thead>
            <tbody>{r.routes.into_iter().map(route_row).collect_view()}</tbody>
        </table>
        {(!open.is_empty()).then(|| view! {
            <ul class="status alert" data-testid="breakers-open">
                {open.into_iter().map(|(name, b)| {
                    let since = b.open_since.map(|t| format!(" since {} UTC", when(t))).unwrap_or_default();
                    view! { <li>{format!("{name}: {} for {}{since}", phase(b.phase), b.model)}</li> }
                }).collect_view()}
            </ul>
        })}
    }
}
