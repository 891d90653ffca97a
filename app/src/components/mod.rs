pub mod coming;
pub mod layout;
pub mod status_badge;
