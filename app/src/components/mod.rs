pub mod layout;
pub mod status_badge;
pub mod coming;
