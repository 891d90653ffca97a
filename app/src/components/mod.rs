pub mod chart;
pub mod download;
pub mod format;
pub mod layout;
pub mod prompt_form;
pub mod status_badge;
pub mod ticker;
