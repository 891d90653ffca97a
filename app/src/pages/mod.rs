//! One module per page of the contract (`/`, `/ui/…`); a page with parts is a folder.

pub mod dashboard;
pub mod dead_letters;
pub mod elsewhere;
pub mod job_detail;
pub mod jobs;
pub mod not_found;
pub mod sign_in;
pub mod submit;
pub mod upload;
pub mod upload_detail;
pub mod usage;
