pub mod dashboard;
pub mod dead_letters;
pub mod jobs;
pub mod not_found;
pub mod sign_in;
pub mod submit;
pub mod upload;
pub mod usage;
