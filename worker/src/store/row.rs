//! A job as stored, and the API's views of it.

use pipeline::dto::{FeedbackView, JobView, Spend, SpendColumns, UploadFile};
use pipeline::feedback::Analysis;
use pipeline::identity::UserId;
use pipeline::jobs::{elapsed_ms, Cursor, JobId};
use pipeline::models::ModelId;
use pipeline::money::UsdMicros;
use pipeline::ops::joblog::JobLog;
use pipeline::outcome::ErrorClass;
use pipeline::status::CallPath;
use pipeline::status::{Kind, Lane, Mode, Status};
use serde::Deserialize;

/// A job row as stored. The vocabularies (status, kind, lane, mode) are read into their enums:
/// a value outside them is a decode error, never a silent default.
#[derive(Debug, Clone, Deserialize)]
pub struct JobRow {
    pub id: JobId,
    pub kind: Kind,
    pub status: Status,
    pub lane: Lane,
    pub mode: Mode,
    pub model: Option<ModelId>,
    pub source: Option<String>,
    pub input_text: Option<String>,
    pub raw_text: Option<String>,
    pub analysis: Option<String>,
    pub anthropic_batch_id: Option<String>,
    pub attempts: i64,
    #[serde(flatten)]
    pub spent: SpendColumns,
    pub error: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub expires_at: Option<i64>,
    /// Held back by a pause since then (migration 0016), still queued.
    #[serde(default)]
    pub held_at: Option<i64>,
    /// Where its final view is posted when it ends (migration 0017).
    #[serde(default)]
    pub callback_url: Option<String>,
    pub prompt_key: Option<String>,
    pub overloads: i64,
    pub user_id: UserId,
    #[serde(default)]
    pub cost_unknown: i64,
    #[serde(default)]
    pub batch_tries: i64,
    pub batch_index: Option<i64>,
    pub file_name: Option<String>,
    pub file_size: Option<i64>,
    pub template: Option<String>,
    #[serde(default)]
    pub error_class: Option<ErrorClass>,
    #[serde(default)]
    pub replay_of: Option<String>,
    #[serde(default)]
    pub replayed_to: Option<String>,
    /// Where the answer lives in R2: set on completion, and on a failure that was paid for
    /// (the raw answer is kept).
    #[serde(default)]
    pub result_key: Option<String>,
    /// A `POST /api/claude` call: the path that answered it.
    #[serde(default)]
    pub path: Option<CallPath>,
    /// A retry's backoff: not to be called before this (epoch ms).
    #[serde(default)]
    pub run_after: Option<i64>,
    /// The worst case it reserves against its user's caps while it may still spend.
    #[serde(default)]
    pub reserved_micros: UsdMicros,
    /// Its tags, stored as a JSON array (migration 0018; `pipeline::tags`).
    #[serde(default, deserialize_with = "pipeline::tags::deserialize_column")]
    pub tags: Vec<String>,
    /// Deadline routing (migration 0019; `pipeline::routing`): when its answer is needed, and
    /// why it took its path.
    #[serde(default)]
    pub deadline_at: Option<i64>,
    #[serde(default)]
    pub route_reason: Option<String>,
    /// Its PDF in the provider's Files API (migration 0021), once uploaded.
    #[serde(default)]
    pub file_id: Option<String>,
    /// Refusal fallback (migration 0023; `pipeline::refusal`): the model it asked to be retried
    /// on, and its refused attempt once one moved it there (a `RefusalView` as JSON).
    #[serde(default)]
    pub fallback_model: Option<String>,
    #[serde(default)]
    pub refusal: Option<String>,
    /// `fast` once a fast-mode answer settled it (migration 0024).
    #[serde(default)]
    pub speed: Option<String>,
    /// The route that answered it when not the Anthropic API (migration 0025).
    #[serde(default)]
    pub route: Option<pipeline::provider::Provider>,
}

pub const COLUMNS: &str =
    "id, user_id, kind, status, lane, mode, model, source, input_text, raw_text, \
    analysis, anthropic_batch_id, attempts, input_tokens, output_tokens, cache_write_tokens, \
    cache_read_tokens, cost_micros, error, created_at, started_at, completed_at, expires_at, held_at, callback_url, prompt_key, overloads, user_id, \
    cost_unknown, batch_tries, batch_index, file_name, file_size, template, error_class, replay_of, \
    replayed_to, result_key, path, run_after, reserved_micros, tags, deadline_at, route_reason, \
    file_id, fallback_model, refusal, speed, route";

impl JobRow {
    /// Whether `GET /jobs/:id/result` has something to serve: a completed job's result, or the
    /// raw answer of a job that failed after a paid call.
    pub fn has_result(&self) -> bool {
        match self.status {
            Status::Completed => true,
            Status::Failed => self.result_key.is_some(),
            _ => false,
        }
    }

    fn result_url(&self) -> Option<String> {
        self.has_result()
            .then(|| format!("/jobs/{}/result", self.id))
    }

    /// The jobs API's view of any job.
    pub fn job_view(&self, now: i64) -> JobView {
        let status = self.status;
        JobView {
            id: self.id.to_string(),
            kind: self.kind,
            status,
            priority: self.lane,
            mode: self.mode,
            model: self.model.as_deref().unwrap_or_default().to_owned(),
            attempts: self.attempts.max(0) as u32,
            spend: self.spend() + self.refused().map(|r| r.spend).unwrap_or_default(),
            error: self.error.clone(),
            anthropic_batch_id: self.anthropic_batch_id.clone(),
            created_at: self.created_at,
            started_at: self.started_at,
            completed_at: self.completed_at,
            expires_at: self.expires_at,
            held_at: self.held_at.filter(|_| status == Status::Queued),
            elapsed_ms: elapsed_ms(status, self.created_at, self.completed_at, now),
            result_url: self.result_url(),
            path: self.path,
            webhook: None,
            attempt_log: Vec::new(),
            tags: self.tags.clone(),
            deadline_at: self.deadline_at,
            route_reason: self.route_reason.clone(),
            deadline_met: self.deadline_at.and_then(|deadline| {
                let completed = self.completed_at.filter(|_| status == Status::Completed);
                pipeline::routing::deadline_met(deadline, completed, status.is_terminal(), now)
            }),
            fallback_model: self.fallback_model.clone(),
            refusal: self.refused(),
            warnings: pipeline::models::job_warnings(self.model.as_deref().unwrap_or(""), now),
            provider: self.route,
            speed: self
                .speed
                .as_deref()
                .and_then(|s| serde_json::from_value(serde_json::Value::String(s.into())).ok()),
        }
    }

    /// Its refused attempt, once a refusal moved it to its fallback.
    pub fn refused(&self) -> Option<pipeline::dto::RefusalView> {
        self.refusal
            .as_deref()
            .and_then(|r| serde_json::from_str(r).ok())
    }

    /// A log line about this job (`pipeline::ops::joblog`), its other fields zero.
    pub fn log<'a>(&'a self, event: &'a str, outcome: &'a str) -> JobLog<'a> {
        JobLog {
            event,
            job_id: &self.id,
            user_id: &self.user_id,
            kind: self.kind.as_str(),
            lane: self.lane.as_str(),
            mode: self.mode.as_str(),
            model: self.model.as_deref(),
            outcome,
            ..JobLog::default()
        }
    }

    /// What the job has spent so far.
    pub fn spend(&self) -> Spend {
        self.spent.spend(self.cost_unknown != 0)
    }

    /// The PDF template of a `pdf` job.
    pub fn template(&self) -> pipeline::pdf::Template {
        pipeline::pdf::Template::parse(self.template.as_deref())
            .unwrap_or(pipeline::pdf::Template::Summary)
    }

    /// A `pdf` job as a file of its upload.
    pub fn upload_file(&self) -> UploadFile {
        let status = self.status;
        UploadFile {
            index: self.batch_index.unwrap_or(0).max(0) as u32,
            job_id: self.id.to_string(),
            file_name: self.file_name.clone().unwrap_or_default(),
            file_size: self.file_size.unwrap_or(0).max(0) as u64,
            status,
            error: self.error.clone(),
            spend: self.spend(),
            extraction: self
                .analysis
                .as_deref()
                .and_then(|a| serde_json::from_str(a).ok()),
            result_url: self.result_url(),
            completed_at: self.completed_at,
        }
    }

    pub fn feedback_view(&self, now: i64) -> FeedbackView {
        let status = self.status;
        FeedbackView {
            id: self.id.to_string(),
            kind: Kind::Feedback,
            status,
            mode: self.mode,
            lane: self.lane,
            source: self.source.clone().unwrap_or_default(),
            text: self.input_text.clone().unwrap_or_default(),
            model: self.model.as_deref().unwrap_or_default().to_owned(),
            analysis: self
                .analysis
                .as_deref()
                .and_then(|a| serde_json::from_str::<Analysis>(a).ok()),
            raw_text: self.raw_text.clone(),
            attempts: self.attempts.max(0) as u32,
            anthropic_batch_id: self.anthropic_batch_id.clone(),
            spend: self.spend(),
            error: self.error.clone(),
            created_at: self.created_at,
            started_at: self.started_at,
            completed_at: self.completed_at,
            expires_at: self.expires_at,
            held_at: self.held_at.filter(|_| status == Status::Queued),
            elapsed_ms: elapsed_ms(status, self.created_at, self.completed_at, now),
        }
    }
}

/// The list cursor of a job row.
pub fn job_cursor(r: &JobRow) -> Cursor {
    Cursor {
        created_at: r.created_at,
        id: r.id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(status: &str) -> serde_json::Value {
        serde_json::json!({
            "id": "abababab-abab-4bab-abab-abababababab", "kind": "prompt", "status": status,
            "lane": "high", "mode": "sync", "model": null, "source": null, "input_text": null,
            "raw_text": null, "analysis": null, "anthropic_batch_id": null, "attempts": 1,
            "input_tokens": 0, "output_tokens": 0, "cache_write_tokens": 0,
            "cache_read_tokens": 0, "cost_micros": 0, "error": null, "created_at": 1,
            "started_at": null, "completed_at": null, "expires_at": null, "prompt_key": null,
            "overloads": 0, "user_id": "ann", "batch_index": null, "file_name": null,
            "file_size": null, "template": null
        })
    }

    #[test]
    fn a_stored_row_reads_into_its_enums() {
        let r: JobRow = serde_json::from_value(row("submitted")).unwrap();
        assert_eq!(
            (r.status, r.kind, r.lane, r.mode),
            (Status::Submitted, Kind::Prompt, Lane::High, Mode::Sync)
        );
    }

    #[test]
    fn a_status_outside_the_vocabulary_is_an_error_not_a_failed_job() {
        assert!(serde_json::from_value::<JobRow>(row("done")).is_err());
    }

    #[test]
    fn a_failed_job_serves_its_kept_answer_only_when_it_was_paid_for() {
        let mut r: JobRow = serde_json::from_value(row("failed")).unwrap();
        assert!(!r.has_result());
        r.result_key = Some("results/x".into());
        assert!(r.has_result());
        assert!(r.job_view(5).result_url.is_some());
    }

    #[test]
    fn ids_user_model_tags_and_error_class_are_read_once_into_their_types() {
        let mut v = row("dead_lettered");
        v["model"] = "claude-retired-1".into();
        v["tags"] = r#"["team:a","eu"]"#.into();
        v["error_class"] = "overloaded".into();
        let r: JobRow = serde_json::from_value(v).unwrap();
        assert_eq!(r.id, "abababab-abab-4bab-abab-abababababab");
        assert_eq!(r.user_id, "ann");
        // A model the catalog no longer lists is still read (its jobs stay visible).
        assert_eq!(r.model.as_deref(), Some("claude-retired-1"));
        assert!(r.model.as_ref().is_some_and(|m| m.known().is_none()));
        assert_eq!(r.tags, ["team:a", "eu"]);
        assert_eq!(r.error_class, Some(ErrorClass::Overloaded));
    }

    #[test]
    fn a_malformed_id_user_or_error_class_is_a_decode_error() {
        for (field, bad) in [
            ("id", "not-an-id"),
            ("user_id", "has spaces"),
            ("error_class", "melted"),
        ] {
            let mut v = row("failed");
            v[field] = bad.into();
            assert!(
                serde_json::from_value::<JobRow>(v).is_err(),
                "{field} = {bad:?} was read"
            );
        }
    }

    #[test]
    fn tags_absent_or_unreadable_read_as_none() {
        let r: JobRow = serde_json::from_value(row("queued")).unwrap();
        assert!(r.tags.is_empty());
        let mut v = row("queued");
        v["tags"] = "not json".into();
        let r: JobRow = serde_json::from_value(v).unwrap();
        assert!(r.tags.is_empty());
    }
}
