//! What every chart draws around its data: the viewBox, the axes and the empty state.

use leptos::prelude::*;

use super::geometry::{BASE, HEIGHT, LEFT, RIGHT, TOP, WIDTH};

/// The `viewBox` every chart draws in; CSS scales it to the page's width.
pub fn view_box() -> String {
    format!("0 0 {WIDTH} {HEIGHT}")
}

/// A coordinate as an SVG attribute.
pub fn px(v: f64) -> String {
    format!("{v:.1}")
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

/// What an empty chart says, inside its frame.
pub fn no_data() -> impl IntoView {
    view! {
        <text class="no-data" x=px(WIDTH / 2.0) y=px(HEIGHT / 2.0) text-anchor="middle">
            "no data yet"
        </text>
    }
}
