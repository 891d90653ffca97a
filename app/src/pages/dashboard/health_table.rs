//! The Worker's health report, on the dashboard.

use leptos::prelude::*;
use pipeline::dto::HealthReport;

/// How long ago `ms` was, in whole seconds, or "never".
pub fn ago(ms: Option<i64>, now: i64) -> String {
    match ms {
        None => "never".into(),
        Some(t) => format!("{} s ago", ((now - t).max(0) + 500) / 1000),
    }
}

/// The overall state and version, each binding's check, the Anthropic target, who is asking,
/// and when the cron and the high lane last ran.
#[component]
pub fn HealthTable(h: HealthReport) -> impl IntoView {
    let ok = h.ok;
    let summary = format!(
        "Worker {} — version {}",
        if ok { "ok" } else { "degraded" },
        h.version
    );
    let checks = h.checks;
    let files = match h.anthropic.as_ref().map(|a| a.files_api) {
        Some(true) => "by file_id (Files API)",
        Some(false) => "inline, as base64",
        None => "",
    };
    view! {
        <p data-testid="health-overall" class=if ok { "status ok" } else { "status bad" }>
            {summary}
        </p>
        <table class="grid" data-testid="health-checks">
            <thead><tr><th>"Binding"</th><th>"Status"</th><th>"Detail"</th><th>"ms"</th></tr></thead>
            <tbody>
                <For each=move || checks.clone() key=|c| c.name.clone() let:c>
                    <tr data-testid=format!("check-{}", c.name)>
                        <td>{c.name.clone()}</td>
                        <td class=if c.ok { "ok" } else { "bad" }>{if c.ok { "ok" } else { "failed" }}</td>
                        <td>{c.detail.clone()}</td>
                        <td class="num">{c.latency_ms}</td>
                    </tr>
                </For>
            </tbody>
        </table>
        <dl class="facts">
            <dt>"Anthropic"</dt>
            <dd data-testid="anthropic-target">{h.anthropic.map(|a| format!("{} at {}", a.kind, a.base_url)).unwrap_or_default()}</dd>
            <dt>"PDFs sent"</dt>
            <dd data-testid="anthropic-files">{files}</dd>
            <dt>"Signed in as"</dt>
            <dd data-testid="whoami">{format!("{} ({:?})", h.user_id, h.role).to_lowercase()}</dd>
            <dt>"Cron last ran"</dt>
            <dd data-testid="cron-last-run">{ago(h.cron_last_run_at, h.now)}</dd>
            <dt>"High lane last consumed"</dt>
            <dd data-testid="queue-last-consumed">{ago(h.queue_last_consumed_at, h.now)}</dd>
        </dl>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_whole_seconds_ago_or_never() {
        assert_eq!(ago(None, 10_000), "never");
        assert_eq!(ago(Some(8_400), 10_000), "2 s ago");
        assert_eq!(ago(Some(12_000), 10_000), "0 s ago");
    }
}
