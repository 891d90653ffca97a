//! A bar chart: one bar per value, each with a tooltip.

use leptos::prelude::*;

use super::frame::{axes, px, Figure};
use super::geometry::{bar_boxes, nice_ceiling, HEIGHT};

/// One bar of a [`BarChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Under the bar (when there is room).
    pub label: String,
    pub value: f64,
    /// The bar's tooltip.
    pub title: String,
}

/// Bars side by side, each with a tooltip; the y axis labelled with its maximum.
#[component]
pub fn BarChart(
    /// Names the `<svg>` for tests.
    testid: &'static str,
    /// What the chart shows (its caption and accessible name).
    title: &'static str,
    bars: Vec<Bar>,
    /// Names each `<rect>` for tests.
    #[prop(optional)]
    bar_testid: Option<&'static str>,
    /// Formats y values (the axis label).
    y_fmt: fn(f64) -> String,
) -> impl IntoView {
    let plot = (!bars.is_empty()).then(|| {
        let values: Vec<f64> = bars.iter().map(|b| b.value).collect();
        let y_max = nice_ceiling(values.iter().copied().fold(0.0, f64::max));
        let boxes = bar_boxes(&values, y_max);
        // Every label when they fit, else the first and the last.
        let every_label = bars.len() <= 12;
        let last = bars.len() - 1;
        let drawn = bars
            .into_iter()
            .zip(boxes)
            .enumerate()
            .map(|(i, (bar, b))| {
                let label = (every_label || i == 0 || i == last).then(|| {
                    view! {
                        <text class="axis-label" x=px(b.x + b.width / 2.0) y=px(HEIGHT - 8.0) text-anchor="middle">
                            {bar.label.clone()}
                        </text>
                    }
                });
                view! {
                    <rect class="bar" data-testid=bar_testid x=px(b.x) y=px(b.y) width=px(b.width) height=px(b.height)>
                        <title>{bar.title}</title>
                    </rect>
                    {label}
                }
            })
            .collect_view();
        view! {
            <g>
                {axes(y_fmt(y_max))}
                {drawn}
            </g>
        }
        .into_any()
    });
    view! { <Figure testid title plot /> }
}
