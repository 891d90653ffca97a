//! Small SVG charts shared by Usage and the Dashboard. The geometry (data → coordinates in the
//! viewBox) is plain functions tested on the host; the components only draw what they return.

use leptos::prelude::*;

/// The viewBox every chart draws in; CSS scales it to the page's width.
pub const WIDTH: f64 = 640.0;
pub const HEIGHT: f64 = 220.0;
const LEFT: f64 = 76.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 28.0;
const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
const PLOT_H: f64 = HEIGHT - TOP - BOTTOM;
/// Where the x axis runs.
const BASE: f64 = TOP + PLOT_H;

/// A named line: `(label, points (x, y))`.
pub type Series = (String, Vec<(f64, f64)>);

/// 1, 2 or 5 × 10ᵏ at or above `v`, so the y axis ends on a round number (1 for nothing).
pub fn nice_ceiling(v: f64) -> f64 {
    if !v.is_finite() || v <= 0.0 {
        return 1.0;
    }
    let base = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * base)
        .find(|c| *c >= v)
        .unwrap_or(10.0 * base)
}

/// The data ranges a line chart shows: x from the first to the last point, y from 0 to a round
/// number at or above the highest point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub x_min: f64,
    pub x_max: f64,
    pub y_max: f64,
}

impl Scale {
    /// Fits the points, or `None` when there are none.
    pub fn fit<'a>(points: impl IntoIterator<Item = &'a (f64, f64)>) -> Option<Scale> {
        points
            .into_iter()
            .fold(None::<Scale>, |acc, &(x, y)| {
                Some(match acc {
                    None => Scale {
                        x_min: x,
                        x_max: x,
                        y_max: y,
                    },
                    Some(s) => Scale {
                        x_min: s.x_min.min(x),
                        x_max: s.x_max.max(x),
                        y_max: s.y_max.max(y),
                    },
                })
            })
            .map(|s| Scale {
                y_max: nice_ceiling(s.y_max),
                ..s
            })
    }

    /// The viewBox x of a data x (a lone x sits in the middle).
    pub fn x(&self, x: f64) -> f64 {
        if self.x_max > self.x_min {
            LEFT + (x - self.x_min) / (self.x_max - self.x_min) * PLOT_W
        } else {
            LEFT + PLOT_W / 2.0
        }
    }

    /// The viewBox y of a data y (0 on the x axis, `y_max` at the top).
    pub fn y(&self, y: f64) -> f64 {
        BASE - (y / self.y_max).clamp(0.0, 1.0) * PLOT_H
    }

    /// Whether a horizontal line at `y` falls inside the plot.
    pub fn shows(&self, y: f64) -> bool {
        (0.0..=self.y_max).contains(&y)
    }

    /// A `<polyline points=…>` value.
    pub fn polyline(&self, points: &[(f64, f64)]) -> String {
        points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", self.x(x), self.y(y)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A bar's rectangle in the viewBox.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BarBox {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// One rectangle per value, side by side across the plot, heights against `y_max`.
pub fn bar_boxes(values: &[f64], y_max: f64) -> Vec<BarBox> {
    let slot = PLOT_W / values.len().max(1) as f64;
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let height = (v / y_max).clamp(0.0, 1.0) * PLOT_H;
            BarBox {
                x: LEFT + i as f64 * slot + slot * 0.1,
                y: BASE - height,
                width: (slot * 0.8).max(1.0),
                height,
            }
        })
        .collect()
}

fn view_box() -> String {
    format!("0 0 {WIDTH} {HEIGHT}")
}

fn px(v: f64) -> String {
    format!("{v:.1}")
}

/// The axes, with the y axis labelled 0 and its maximum.
fn axes(y_max_label: String) -> impl IntoView {
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
fn no_data() -> impl IntoView {
    view! {
        <text class="no-data" x=px(WIDTH / 2.0) y=px(HEIGHT / 2.0) text-anchor="middle">
            "no data yet"
        </text>
    }
}

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
    });
    let empty = plot.is_none().then(no_data);
    view! {
        <figure class="chart">
            <figcaption>{title}</figcaption>
            <svg data-testid=testid viewBox=view_box() role="img" aria-label=title>
                {plot}
                {empty}
            </svg>
            <ul class="legend">
                {legend.into_iter().enumerate().map(|(i, l)| view! {
                    <li><span class=format!("swatch series-{}", i % 4)></span>{l}</li>
                }).collect_view()}
            </ul>
        </figure>
    }
}

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
    });
    let empty = plot.is_none().then(no_data);
    view! {
        <figure class="chart">
            <figcaption>{title}</figcaption>
            <svg data-testid=testid viewBox=view_box() role="img" aria-label=title>
                {plot}
                {empty}
            </svg>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_end_on_round_numbers() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(3.0), 5.0);
        assert_eq!(nice_ceiling(1_500.0), 2_000.0);
        assert_eq!(nice_ceiling(60_000.0), 100_000.0);
        assert_eq!(nice_ceiling(0.3), 0.5);
        assert_eq!(nice_ceiling(f64::NAN), 1.0);
    }

    #[test]
    fn points_map_into_the_plot() {
        let pts = [(0.0, 0.0), (10.0, 4.0)];
        let s = Scale::fit(&pts).unwrap();
        assert_eq!(s.y_max, 5.0);
        assert_eq!((s.x(0.0), s.y(0.0)), (LEFT, BASE));
        assert_eq!(s.x(10.0), WIDTH - RIGHT);
        assert!(s.y(4.0) > TOP && s.y(4.0) < BASE);
        assert!(s.shows(5.0) && !s.shows(6.0));
        assert_eq!(s.polyline(&pts).split(' ').count(), 2);
        assert_eq!(Scale::fit(&[]), None);
        let lone = Scale::fit(&[(3.0, 1.0)]).unwrap();
        assert_eq!(lone.x(3.0), LEFT + PLOT_W / 2.0);
    }

    #[test]
    fn bars_share_the_width_and_stand_on_the_axis() {
        let boxes = bar_boxes(&[0.0, 5.0, 10.0], 10.0);
        assert_eq!(boxes.len(), 3);
        assert_eq!(boxes[0].height, 0.0);
        assert_eq!(boxes[2].height, PLOT_H);
        for b in &boxes {
            assert!((b.y + b.height - BASE).abs() < 1e-9);
            assert!(b.x >= LEFT && b.x + b.width <= WIDTH - RIGHT + 1e-9);
        }
        assert!(bar_boxes(&[], 1.0).is_empty());
    }
}
