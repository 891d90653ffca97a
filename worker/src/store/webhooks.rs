//! Webhook deliveries (migration 0017): what is due, the claim of a delivery for one attempt,
//! each attempt's record, and a job's deliveries for its page.

use pipeline::dto::{WebhookAttemptView, WebhookView};
use serde::Deserialize;

use super::{num, opt, Statement, Store};

/// A delivery claimed for an attempt, with the secret that signs it (`None`: the key has none;
/// the deployment's `WEBHOOK_SECRET` signs it).
#[derive(Debug, Clone, Deserialize)]
pub struct Due {
    pub id: String,
    pub job_id: String,
    pub url: String,
    pub attempts: u32,
    pub body: Option<String>,
    pub secret: Option<String>,
}

/// Deliveries one run attempts at most.
pub const DUE_PER_RUN: u32 = 20;

#[derive(Deserialize)]
struct Row {
    id: String,
    url: String,
    state: String,
    attempts: u32,
    next_at: Option<f64>,
}

#[derive(Deserialize)]
struct AttemptRow {
    n: u32,
    at: f64,
    status: Option<u16>,
    error: Option<String>,
    ms: f64,
    resend: u32,
}

const CLAIMED: &str =
    "SELECT d.id, d.job_id, d.url, d.attempts, d.body, k.webhook_secret AS secret \
     FROM webhook_deliveries d LEFT JOIN api_keys k ON k.id = d.key_id";

impl Store {
    /// Takes up to [`DUE_PER_RUN`] due deliveries for one attempt each: their next attempt is
    /// pushed past `lease_until`, so a concurrent run does not send them too.
    pub async fn claim_due(&self, now: i64, lease_until: i64) -> worker::Result<Vec<Due>> {
        let ids: Vec<String> = {
            #[derive(Deserialize)]
            struct Id {
                id: String,
            }
            let rows: Vec<Id> = self
                .all(
                    &format!(
                        "UPDATE webhook_deliveries SET next_at = ?2 WHERE id IN (SELECT id FROM \
                         webhook_deliveries INDEXED BY idx_webhooks_due WHERE state = 'pending' \
                         AND next_at <= ?1 ORDER BY next_at LIMIT {DUE_PER_RUN}) \
                         AND state = 'pending' RETURNING id"
                    ),
                    &[num(now), num(lease_until)],
                )
                .await?;
            rows.into_iter().map(|r| r.id).collect()
        };
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let args: Vec<_> = ids.iter().map(|i| i.as_str().into()).collect();
        self.all(
            &format!("{CLAIMED} WHERE d.id IN ({})", super::marks(ids.len())),
            &args,
        )
        .await
    }

    /// A job's delivery, for a re-send.
    pub async fn delivery_of(&self, job_id: &str) -> worker::Result<Option<Due>> {
        self.first(&format!("{CLAIMED} WHERE d.job_id = ?1"), &[job_id.into()])
            .await
    }

    /// Records attempt `n` and the delivery's new state, in one transaction; the body is kept
    /// from the first attempt on.
    pub fn attempted(&self, a: &Attempted<'_>) -> worker::Result<Vec<Statement>> {
        Ok(vec![
            self.statement(
                "INSERT OR REPLACE INTO webhook_attempts (delivery_id, n, at, status, error, ms, \
                 resend) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                &[
                    a.id.into(),
                    num(a.n as i64),
                    num(a.at),
                    a.status
                        .map(|s| num(s as i64))
                        .unwrap_or(wasm_bindgen::JsValue::NULL),
                    opt(a.error),
                    num(a.ms),
                    num(a.resend as i64),
                ],
            )?,
            self.statement(
                "UPDATE webhook_deliveries SET attempts = ?2, state = ?3, next_at = ?4, \
                 body = COALESCE(body, ?5), updated_at = ?6 WHERE id = ?1",
                &[
                    a.id.into(),
                    num(a.n as i64),
                    a.state.into(),
                    a.next_at.map(num).unwrap_or(wasm_bindgen::JsValue::NULL),
                    a.body.into(),
                    num(a.at),
                ],
            )?,
        ])
    }

    /// The job's delivery and its attempts, for its page (`None` without a callback).
    pub async fn webhook_view(&self, job_id: &str) -> worker::Result<Option<WebhookView>> {
        let found = self
            .rounds(vec![vec![
                self.statement(
                    "SELECT id, url, state, attempts, next_at FROM webhook_deliveries \
                     WHERE job_id = ?1",
                    &[job_id.into()],
                )?,
                self.statement(
                    "SELECT a.n, a.at, a.status, a.error, a.ms, a.resend FROM webhook_attempts a \
                     JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.job_id = ?1 \
                     ORDER BY a.n",
                    &[job_id.into()],
                )?,
            ]])
            .await?;
        let r = super::group(&found, 0, "the webhook")?;
        let Some(d) = super::nth(r, 0, "the delivery")?
            .results::<Row>()?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let attempts = super::nth(r, 1, "the attempts")?
            .results::<AttemptRow>()?
            .into_iter()
            .map(|a| WebhookAttemptView {
                n: a.n,
                at: a.at as i64,
                status: a.status,
                error: a.error,
                ms: a.ms as i64,
                resend: a.resend != 0,
            })
            .collect();
        Ok(Some(WebhookView {
            id: d.id,
            url: d.url,
            state: d.state,
            attempts_made: d.attempts,
            next_at: d.next_at.map(|n| n as i64),
            attempts,
        }))
    }
}

/// One attempt's outcome, to record.
pub struct Attempted<'a> {
    pub id: &'a str,
    pub n: u32,
    pub at: i64,
    pub status: Option<u16>,
    pub error: Option<&'a str>,
    pub ms: i64,
    pub resend: bool,
    pub state: &'a str,
    pub next_at: Option<i64>,
    pub body: &'a str,
}
