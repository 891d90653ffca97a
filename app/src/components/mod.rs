//! Pieces shared by several pages: one component per file, plus plain helpers (`format`,
//! `download`, `ticker`) and the charts.

pub mod attempt_log;
pub mod chart;
pub mod download;
pub mod fetched;
pub mod format;
pub mod job_status;
pub mod kpi;
pub mod layout;
pub mod ticker;
