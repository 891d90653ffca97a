//! The claude-pipeline single-page app (Leptos 0.8, client-side rendered).
//!
//! # Layout
//! - [`api`]: the one typed client of the Worker's JSON API; no page makes a request itself.
//! - `components/`: what several pages share, one component per file: the layout (navigation,
//!   who is signed in, health badge, theme), the job-status badge, the attempt log, figure cards,
//!   the charts, what a page shows for fetched data; and plain helpers (format, download,
//!   ticker).
//! - `pages/`: one module per page of the contract (`/`, `/ui/…`), a folder when it has parts.
//!
//! # Data
//! A page loads with a `LocalResource` and renders it through `components::fetched::fetched`:
//! a loading line until the first answer, the API's message under the page's error test id if
//! the call failed, else the page's view of the data — and the last view stays while a refetch
//! runs, so polling never flickers. (Not `Transition` → `ErrorBoundary` → `Suspend` on every
//! page: that was a large share of the SPA's code.) Mutations are `Action`s; the resources they
//! change track the action's `version()`, so they refetch when it ends. Lists are plain
//! iterators, not keyed `<For>`: each refetch rebuilds the view in place, which disposes the
//! reactive owners a `<For>` would keep its old rows under.

#![recursion_limit = "256"]
// The Dashboard's bundle compiles the other pages' code without a route to it.
#![cfg_attr(feature = "dashboard-bundle", allow(dead_code, unused_imports))]

pub mod api;
mod components;
mod pages;
pub mod shell;
mod takeover;

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;

use components::layout::Layout;
use pages::{
    dashboard::Dashboard, dead_letters::DeadLetters, job_detail::JobDetail, jobs::Jobs,
    not_found::NotFound, sign_in::SignIn, submit::Submit, upload::Upload,
    upload_detail::UploadDetail, usage::Usage,
};

/// The whole app: the router inside the shared layout.
#[cfg(not(feature = "dashboard-bundle"))]
#[component]
pub fn App() -> impl IntoView {
    takeover::provide_ready();
    view! {
        <Router>
            <Layout>
                <Routes fallback=NotFound>
                    <Route path=path!("/") view=Submit />
                    <Route path=path!("/ui/jobs") view=Jobs />
                    <Route path=path!("/ui/jobs/:id") view=JobDetail />
                    <Route path=path!("/ui/upload") view=Upload />
                    <Route path=path!("/ui/batches/:id") view=UploadDetail />
                    <Route path=path!("/ui/usage") view=Usage />
                    <Route path=path!("/ui/dashboard") view=Dashboard />
                    <Route path=path!("/ui/dead-letters") view=DeadLetters />
                    <Route path=path!("/ui/sign-in") view=SignIn />
                </Routes>
            </Layout>
        </Router>
    }
}

/// The Dashboard's bundle (`dashboard-bundle`): the same frame with the Dashboard alone, about
/// 60 % of the whole app's bytes, for a visit that lands on `/ui/dashboard` (its shell loads
/// this bundle). A link to any other page loads that page from the Worker, with the whole app
/// ([`pages::elsewhere::Elsewhere`]).
#[cfg(feature = "dashboard-bundle")]
#[component]
pub fn App() -> impl IntoView {
    takeover::provide_ready();
    view! {
        <Router>
            <Layout>
                <Routes fallback=pages::elsewhere::Elsewhere>
                    <Route path=path!("/ui/dashboard") view=Dashboard />
                </Routes>
            </Layout>
        </Router>
    }
}
