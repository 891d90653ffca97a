//! Small SVG charts shared by Usage and the Dashboard. The geometry (data → coordinates in the
//! viewBox) is plain functions tested on the host; the components only draw what they return.

mod bar_chart;
mod frame;
pub mod geometry;
mod line_chart;

pub use bar_chart::{Bar, BarChart};
pub use geometry::Series;
pub use line_chart::LineChart;
