//! A line chart: series over time (or any x), an optional threshold, a legend.

use leptos::prelude::*;

use super::frame::{axes, px, Figure};
use super::geometry::{Scale, Series, HEIGHT, LEFT, RIGHT, WIDTH};

/// Lines over time (or any x), with an optional dashed threshold and a legend.
#[component]
pub fn LineChart(
    /// Names the `<svg>` for tests.
    testid: &'static str,
    /// What the chart shows (its caption and accessible name).
    title: &'static str,
    series: Vec<Series>,
    /// A dashed horizontal line at this y, drawn when it falls inside the plot.
    #[prop(optional)]
    threshold: Option<f64>,
    /// Formats y values (axis and threshold labels).
    y_fmt: fn(f64) -> String,
    /// Formats x values (the axis's two ends).
    x_fmt: fn(f64) -> String,
) -> impl IntoView {
    let scale = Scale::fit(series.iter().flat_map(|(_, p)| p.iter()));
    let legend: Vec<String> = series.iter().map(|(l, _)| l.clone()).collect();
    let plot = scale.map(|s| {
        let threshold = threshold.filter(|t| s.shows(*t)).map(|t| {
            let y = px(s.y(t));
            view! {
                <line class="threshold" x1=px(LEFT) x2=px(WIDTH - RIGHT) y1=y.clone() y2=y.clone() stroke-dasharray="6 4" />
                <text class="axis-label threshold-label" x=px(WIDTH - RIGHT) y=px(s.y(t) - 4.0) text-anchor="end">
                    {y_fmt(t)}
                </text>
            }
        });
        let lines = series
            .iter()
            .enumerate()
            .map(|(i, (label, points))| {
                let class = format!("line series-{}", i % 4);
                // A single point draws no line: mark it.
                let dot = (points.len() == 1).then(|| {
                    view! { <circle class=format!("dot series-{}", i % 4) cx=px(s.x(points[0].0)) cy=px(s.y(points[0].1)) r="3" /> }
                });
                view! {
                    <polyline class=class points=s.polyline(points) data-series=label.clone() />
                    {dot}
                }
            })
            .collect_view();
        view! {
            <g>
                {axes(y_fmt(s.y_max))}
                <text class="axis-label" x=px(LEFT) y=px(HEIGHT - 8.0) text-anchor="start">{x_fmt(s.x_min)}</text>
                <text class="axis-label" x=px(WIDTH - RIGHT) y=px(HEIGHT - 8.0) text-anchor="end">{x_fmt(s.x_max)}</text>
                {threshold}
                {lines}
            </g>
        }
        .into_any()
    });
    view! {
        <Figure testid title plot>
            <ul class="legend">
                {legend.into_iter().enumerate().map(|(i, l)| view! {
                    <li><span class=format!("swatch series-{}", i % 4)></span>{l}</li>
                }).collect_view()}
            </ul>
        </Figure>
    }
}
