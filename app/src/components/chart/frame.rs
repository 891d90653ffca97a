//! What every chart draws around its data: the figure and its caption, the viewBox, the axes and
//! the empty state.

use leptos::prelude::*;
use pipeline::decimal::fixed;

use super::geometry::{BASE, HEIGHT, LEFT, RIGHT, TOP, WIDTH};

/// The `viewBox` every chart draws in; CSS scales it to the page's width.
fn view_box() -> String {
    format!("0 0 {} {}", fixed(WIDTH, 0), fixed(HEIGHT, 0))
}

/// A coordinate as an SVG attribute.
pub fn px(v: f64) -> String {
    fixed(v, 1)
}

/// The axes, with the y axis labelled 0 and its maximum.
pub fn axes(y_max_label: String) -> impl IntoView {
    view! {
        <line class="axis" x1=px(LEFT) y1=px(TOP) x2=px(LEFT) y2=px(BASE) />
        <line class="axis" x1=px(LEFT) y1=px(BASE) x2=px(WIDTH - RIGHT) y2=px(BASE) />
        <text class="axis-label" x=px(LEFT - 6.0) y=px(TOP + 4.0) text-anchor="end" data-testid="chart-y-max">
            {y_max_label}
        </text>
        <text class="axis-label" x=px(LEFT - 6.0) y=px(BASE) text-anchor="end">"0"</text>
    }
}

/// The figure every chart is: its caption, then the SVG with the plot — or "no data yet" when
/// there is none — then whatever follows it (a legend).
#[component]
pub fn Figure(
    testid: &'static str,
    title: &'static str,
    plot: Option<AnyView>,
    #[prop(optional)] children: Option<Children>,
) -> impl IntoView {
    let empty = plot.is_none().then(no_data);
    view! {
        <figure class="chart">
            <figcaption>{title}</figcaption>
            <svg data-testid=testid viewBox=view_box() role="img" aria-label=title>
                {plot}
                {empty}
            </svg>
            {children.map(|c| c())}
        </figure>
    }
}

/// What an empty chart says, inside its frame.
fn no_data() -> impl IntoView {
    view! {
        <text class="no-data" x=px(WIDTH / 2.0) y=px(HEIGHT / 2.0) text-anchor="middle">
            "no data yet"
        </text>
    }
}
