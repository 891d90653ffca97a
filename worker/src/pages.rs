//! The SPA's pages whose path carries an id (`/ui/jobs/:id`, `/ui/batches/:id`): no file of the
//! static assets is theirs, and the assets' single-page fallback would answer with the Submit
//! page's shell, which would show a form until the wasm drew the job. The Worker answers them
//! with the frame shell instead (`app::shell::FRAME`: header, navigation, a loading line), read
//! from the assets binding as it is, headers included.

use worker::Env;

use crate::config::ASSETS;

/// Where `cargo xtask build` puts the frame among the assets (`ui/frame.html`, served without
/// its extension).
const FRAME: &str = "https://assets.local/ui/frame";

/// Whether `path` is a page the frame shell answers: one id under a list page.
pub fn is_deep_page(path: &str) -> bool {
    ["/ui/jobs/", "/ui/batches/"].iter().any(|prefix| {
        path.strip_prefix(prefix)
            .is_some_and(|id| !id.is_empty() && !id.contains('/'))
    })
}

/// The frame shell, as the assets serve it; `None` without an assets binding (a Worker run
/// without `cargo xtask build`), when the router's 404 answers instead.
pub async fn frame(env: &Env) -> Option<axum::http::Response<axum::body::Body>> {
    let assets = env.assets(ASSETS).ok()?;
    let found = assets.fetch(FRAME, None).await.ok()?;
    if found.status() != 200 {
        return None;
    }
    let (parts, body) = found.into_parts();
    Some(axum::http::Response::from_parts(
        parts,
        axum::body::Body::new(body),
    ))
}

#[cfg(test)]
mod tests {
    use super::is_deep_page;

    #[test]
    fn only_a_single_id_under_a_list_page_gets_the_frame() {
        assert!(is_deep_page("/ui/jobs/0193a7b2"));
        assert!(is_deep_page("/ui/batches/abc"));
        assert!(!is_deep_page("/ui/jobs"));
        assert!(!is_deep_page("/ui/jobs/"));
        assert!(!is_deep_page("/ui/jobs/a/b"));
        assert!(!is_deep_page("/jobs/abc"));
        assert!(!is_deep_page("/ui/usage"));
    }
}
