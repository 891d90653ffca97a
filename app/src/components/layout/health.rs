//! The Worker's health report as the layout shares it: who the caller is and how the Worker runs.

use leptos::prelude::*;
use pipeline::dto::HealthReport;
use pipeline::identity::{AuthMode, Role};

use crate::api::ApiError;

/// The Worker's health report, fetched once by the layout and shared with every page.
pub type Health = LocalResource<Result<HealthReport, ApiError>>;

/// Whether the Worker runs in open (demo) mode: no authentication, ops actions for everyone.
pub fn demo_mode(health: Health) -> impl Fn() -> bool + Copy {
    move || {
        health
            .get()
            .and_then(|r| r.ok())
            .is_some_and(|h| h.auth_mode == AuthMode::Open)
    }
}

/// Whether the caller may see the ops pages and controls (admins; everyone in demo mode, where
/// the Worker names every caller an admin). The Worker enforces it anyway: this only hides.
pub fn is_admin(health: Health) -> impl Fn() -> bool + Copy {
    move || {
        health
            .get()
            .and_then(|r| r.ok())
            .is_some_and(|h| h.role == Role::Admin)
    }
}
