//! The claude-pipeline single-page app (Leptos 0.8, client-side rendered).
//!
//! # Layout
//! - [`api`]: the one typed client of the Worker's JSON API.
//! - `components/`: the layout, navigation, status badge, demo banner, charts and format helpers.
//! - `pages/`: one component per page of the contract (`/`, `/ui/…`).

pub mod api;
mod components;
mod pages;

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;

use components::layout::Layout;
use pages::{
    batch_detail::BatchDetail, dashboard::Dashboard, dead_letters::DeadLetters,
    job_detail::JobDetail, jobs::Jobs, not_found::NotFound, sign_in::SignIn, submit::Submit,
    upload::Upload, usage::Usage,
};

/// The whole app: the router inside the shared layout.
#[component]
pub fn App() -> impl IntoView {
    view! {
        <Router>
            <Layout>
                <Routes fallback=NotFound>
                    <Route path=path!("/") view=Submit />
                    <Route path=path!("/ui/jobs") view=Jobs />
                    <Route path=path!("/ui/jobs/:id") view=JobDetail />
                    <Route path=path!("/ui/upload") view=Upload />
                    <Route path=path!("/ui/batches/:id") view=BatchDetail />
                    <Route path=path!("/ui/usage") view=Usage />
                    <Route path=path!("/ui/dashboard") view=Dashboard />
                    <Route path=path!("/ui/dead-letters") view=DeadLetters />
                    <Route path=path!("/ui/sign-in") view=SignIn />
                </Routes>
            </Layout>
        </Router>
    }
}
