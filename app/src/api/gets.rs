//! The path and query of every `GET` the pages make, built in one place: the calls in
//! [`super`] send them, and a page's shell names the ones its first draw makes
//! ([`crate::shell::first_gets`]) so `boot.js` can ask for them while the wasm is on its way.
//! Pure and host-built (the `shells` binary runs them), so both sides build the same text.

use pipeline::ops::dlq::DlqFilter;

/// `path` with the non-empty `params` as an encoded query (no `?` when there are none).
fn with_query<'a>(path: &str, params: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    let mut any = false;
    for (k, v) in params.into_iter().filter(|(_, v)| !v.is_empty()) {
        q.append_pair(k, v);
        any = true;
    }
    if any {
        format!("{path}?{}", q.finish())
    } else {
        path.to_string()
    }
}

/// `GET /api/health`.
pub fn health() -> String {
    "/api/health".into()
}

/// `GET /api/feedback`: the newest page.
pub fn feedback() -> String {
    with_query("/api/feedback", [("limit", "20")])
}

/// `GET /jobs` with filters (`status`, `priority`, `kind`; empty means any).
pub fn jobs(status: &str, priority: &str, kind: &str) -> String {
    with_query(
        "/jobs",
        [
            ("limit", "50"),
            ("status", status),
            ("priority", priority),
            ("kind", kind),
        ],
    )
}

/// `GET /batches`: the newest uploads.
pub fn batches() -> String {
    with_query("/batches", [("limit", "20")])
}

/// A usage report over `from`..`to` (`YYYY-MM-DD`) for `user`; empty values are left out
/// (the Worker's defaults apply).
pub fn usage(path: &str, from: &str, to: &str, user: &str) -> String {
    with_query(
        path,
        [
            ("from", from.trim()),
            ("to", to.trim()),
            ("user", user.trim()),
        ],
    )
}

/// `GET /api/pauses`.
pub fn pauses() -> String {
    "/api/pauses".into()
}

/// `GET /api/metrics`: the last `minutes`.
pub fn metrics(minutes: u32) -> String {
    format!("/api/metrics?minutes={minutes}")
}

/// `GET /api/rollout`: the last `hours`.
pub fn rollout(hours: u32) -> String {
    format!("/api/rollout?hours={hours}")
}

/// `GET /api/routing`: the last `days`.
pub fn routing(days: u32) -> String {
    format!("/api/routing?days={days}")
}

/// `GET /api/routes`.
pub fn routes() -> String {
    "/api/routes".into()
}

/// `GET /api/reconciliation`.
pub fn reconciliation() -> String {
    "/api/reconciliation".into()
}

/// `GET /api/dlq`: one page matching `filter`, from `cursor` on.
pub fn dlq(filter: &DlqFilter, cursor: Option<&str>) -> String {
    let (from, to) = (
        filter.from.map(|v| v.to_string()),
        filter.to.map(|v| v.to_string()),
    );
    let text = |v: Option<&str>| v.unwrap_or_default().to_string();
    let params = [
        ("status", text(filter.status.as_deref())),
        ("error_class", text(filter.error_class.as_deref())),
        ("user", text(filter.user.as_deref())),
        ("model", text(filter.model.as_deref())),
        ("from", from.unwrap_or_default()),
        ("to", to.unwrap_or_default()),
        ("cursor", text(cursor)),
        ("limit", "50".to_string()),
    ];
    with_query("/api/dlq", params.iter().map(|(k, v)| (*k, v.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_values_are_left_out_and_none_leaves_no_question_mark() {
        assert_eq!(jobs("", "", ""), "/jobs?limit=50");
        assert_eq!(
            jobs("failed", "", "pdf"),
            "/jobs?limit=50&status=failed&kind=pdf"
        );
        assert_eq!(usage("/api/usage/tags", "", " ", ""), "/api/usage/tags");
    }

    #[test]
    fn values_are_encoded() {
        assert_eq!(
            usage("/api/usage", "2026-12-01", "", "carol smith&x=1"),
            "/api/usage?from=2026-12-01&user=carol+smith%26x%3D1"
        );
        let f = DlqFilter {
            status: Some("dead_lettered".into()),
            model: Some("claude-haiku-5-5".into()),
            from: Some(1_700_000_000_000),
            ..DlqFilter::default()
        };
        assert_eq!(
            dlq(&f, Some("a/b")),
            "/api/dlq?status=dead_lettered&model=claude-haiku-5-5&from=1700000000000&cursor=a%2Fb&limit=50"
        );
    }
}
