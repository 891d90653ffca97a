//! The charts' geometry: data → coordinates in the viewBox, plain functions tested on the host.

use pipeline::decimal::fixed;

/// The viewBox every chart draws in; CSS scales it to the page's width.
pub const WIDTH: f64 = 640.0;
pub const HEIGHT: f64 = 220.0;
pub const LEFT: f64 = 76.0;
pub const RIGHT: f64 = 14.0;
pub const TOP: f64 = 14.0;
const BOTTOM: f64 = 28.0;
pub const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
pub const PLOT_H: f64 = HEIGHT - TOP - BOTTOM;
/// Where the x axis runs.
pub const BASE: f64 = TOP + PLOT_H;

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
            .map(|&(x, y)| format!("{},{}", fixed(self.x(x), 1), fixed(self.y(y), 1)))
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
