//! What the consumers and the poller write on a job's row: the claim, the settlement of a paid
//! answer, a failure with its class, a retry, a dead letter, a resubmission into a later batch —
//! each guarded by its `Transition` (and, for a Message Batch's results, by the batch) — and the
//! attempt log.

use pipeline::answer::{End, Settled};
use pipeline::anthropic::Usage;
use pipeline::dto::AttemptView;
use pipeline::dto::RefusalView;
use pipeline::outcome::{AttemptOutcome, Failure};
use pipeline::provider::Provider;
use pipeline::status::{Kind, Lane, Mode, Status, Transition};
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::{money, num, opt, Statement, Store};
use pipeline::money::UsdMicros;

/// Which rows a settlement may touch: a synchronous call's job, or a job of this Message Batch
/// (still `submitted` in it).
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    Sync,
    InBatch(&'a str),
}

impl Scope<'_> {
    /// The guard of `t` in this scope; the batch id is bound as `?p` (NULL for a sync call).
    fn guard(self, t: Transition, p: usize) -> String {
        match self {
            Scope::Sync => format!("{} AND ?{p} IS NULL", t.guard()),
            Scope::InBatch(_) => format!(
                "{} AND anthropic_batch_id = ?{p}",
                Status::sql_in(&[Status::Submitted])
            ),
        }
    }

    fn batch(self) -> JsValue {
        match self {
            Scope::Sync => JsValue::NULL,
            Scope::InBatch(b) => b.into(),
        }
    }
}

/// One call made for a job.
pub struct Attempt<'a> {
    pub job_id: &'a str,
    pub n: u32,
    pub model: Option<&'a str>,
    pub started_at: i64,
    pub ended_at: i64,
    pub outcome: AttemptOutcome,
    pub error: Option<&'a str>,
    /// The route the call went to.
    pub route: Provider,
}

/// A route as `jobs.route` and `job_attempts.route` keep it: NULL for the Anthropic API.
fn route_column(route: Provider) -> JsValue {
    match route {
        Provider::Anthropic => JsValue::NULL,
        other => other.as_str().into(),
    }
}

impl Store {
    /// Claims a job for a synchronous call: `running`, one more attempt. Only a `queued` job can
    /// be claimed, so a second delivery of a job that is already running never calls Claude
    /// again (a job whose Worker died mid-call is put back to `queued` by the reconciler first).
    pub async fn claim(&self, id: &str, now: i64) -> worker::Result<bool> {
        let t = Transition::Claim;
        let sql = format!(
            "UPDATE jobs SET {}, attempts = attempts + 1, started_at = COALESCE(started_at, ?2), \
             updated_at = ?2 WHERE id = ?1 AND {}",
            t.set(),
            t.guard()
        );
        Ok(self.run(&sql, &[id.into(), num(now)]).await? > 0)
    }

    /// The statement that settles a paid answer: completed with its result, or failed once —
    /// keeping what was paid, and pointing at the answer kept in R2.
    pub fn settle(
        &self,
        id: &str,
        s: &Settled,
        now: i64,
        scope: Scope<'_>,
    ) -> worker::Result<Statement> {
        match &s.end {
            End::Complete { result } => {
                let t = Transition::Complete;
                let sql = format!(
                    "UPDATE jobs SET {}, input_tokens = ?2, output_tokens = ?3, \
                     cache_write_tokens = ?4, cache_read_tokens = ?5, cost_micros = ?6, \
                     raw_text = ?7, analysis = ?8, result_key = 'results/' || id, error = NULL, \
                     completed_at = ?9, updated_at = ?9, model = COALESCE(?11, model), \
                     cost_unknown = ?12, speed = ?13, route = ?14 WHERE id = ?1 AND {}",
                    t.set(),
                    scope.guard(t, 10)
                );
                let u = s.usage.unwrap_or_default();
                Ok(self.statement(
                    &sql,
                    &[
                        &[id.into()][..],
                        &spent(&u, s.cost_micros),
                        &[
                            opt(s.raw_text.as_deref()),
                            opt(result.as_deref()),
                            num(now),
                            scope.batch(),
                            s.answered_by.as_str().into(),
                            JsValue::from_bool(s.cost_micros.is_none()),
                            fast(s.usage.as_ref()),
                            route_column(s.route),
                        ],
                    ]
                    .concat(),
                )?)
            }
            End::Fail(f) => self.fail(id, f, Some(s), now, scope),
        }
    }

    /// Writes a synchronous call's settled answer on its row (see [`Store::settle`]).
    pub async fn settle_sync(&self, id: &str, s: &Settled, now: i64) -> worker::Result<()> {
        self.run_one(self.settle(id, s, now, Scope::Sync)?).await?;
        Ok(())
    }

    /// Fails a job for good after a synchronous call, nothing paid (see [`Store::fail`]).
    pub async fn fail_sync(&self, id: &str, f: &Failure, now: i64) -> worker::Result<()> {
        self.run_one(self.fail(id, f, None, now, Scope::Sync)?)
            .await?;
        Ok(())
    }

    /// The statement that fails a job for good, with its class — keeping what was paid (and
    /// pointing at the answer kept in R2) when a paid answer failed it.
    pub fn fail(
        &self,
        id: &str,
        f: &Failure,
        paid: Option<&Settled>,
        now: i64,
        scope: Scope<'_>,
    ) -> worker::Result<Statement> {
        let t = Transition::Fail;
        let usage = paid.and_then(|s| s.usage);
        let cost = paid.and_then(|s| s.cost_micros);
        let u = usage.unwrap_or_default();
        let sql = format!(
            "UPDATE jobs SET {}, error = ?2, error_class = ?13, raw_text = COALESCE(?3, raw_text), \
             input_tokens = input_tokens + ?4, output_tokens = output_tokens + ?5, \
             cache_write_tokens = cache_write_tokens + ?6, \
             cache_read_tokens = cache_read_tokens + ?7, cost_micros = cost_micros + ?8, \
             completed_at = ?9, updated_at = ?9, cost_unknown = MAX(cost_unknown, ?11), \
             result_key = CASE WHEN ?12 THEN 'results/' || id ELSE result_key END, \
             speed = COALESCE(?14, speed), route = COALESCE(?15, route) WHERE id = ?1 AND {}",
            t.set(),
            scope.guard(t, 10)
        );
        self.statement(
            &sql,
            &[
                &[
                    id.into(),
                    f.reason.as_str().into(),
                    opt(paid.and_then(|s| s.raw_text.as_deref())),
                ][..],
                &spent(&u, cost),
                &[
                    num(now),
                    scope.batch(),
                    JsValue::from_bool(usage.is_some() && cost.is_none()),
                    // A paid answer is always stored in R2 before its row is failed: point at it.
                    JsValue::from_bool(usage.is_some()),
                    f.class.as_str().into(),
                    fast(usage.as_ref()),
                    paid.map_or(JsValue::NULL, |s| route_column(s.route)),
                ],
            ]
            .concat(),
        )
    }

    /// A refused attempt with a fallback (`pipeline::refusal`): back to `queued` on the fallback
    /// model, once (`refusal IS NULL`), the refused attempt kept as `refusal` — migration
    /// 0023's trigger counts it under the model that refused; its reservation stays (admission
    /// reserved both attempts' worst cases, `routes::admission::worst_case`). A Message Batch's job goes back to the accumulation
    /// for a later batch; a synchronous one is sent to its lane by the caller (the reconciler
    /// sends it if that send fails).
    pub fn fall_back(
        &self,
        id: &str,
        refusal: &RefusalView,
        now: i64,
        scope: Scope<'_>,
    ) -> worker::Result<Statement> {
        let t = Transition::FallBack;
        let batch = match scope {
            Scope::Sync => "",
            Scope::InBatch(_) => {
                ", anthropic_batch_id = NULL, flush_id = NULL, accumulated_at = ?5, \
                 batch_tries = 0"
            }
        };
        let sql = format!(
            "UPDATE jobs SET {}, model = ?2, refusal = ?3, error = ?4, overloads = 0, \
             run_after = NULL, updated_at = ?5{batch} WHERE id = ?1 AND refusal IS NULL AND {}",
            t.set(),
            scope.guard(t, 6)
        );
        let json = serde_json::to_string(refusal)
            .map_err(|e| worker::Error::RustError(format!("a refusal as JSON: {e}")))?;
        self.statement(
            &sql,
            &[
                id.into(),
                refusal.fallback_model.as_str().into(),
                json.into(),
                refusal.describe().into(),
                num(now),
                scope.batch(),
            ],
        )
    }

    /// A failure worth a retry: back to `queued` with the reason until the retry runs; an
    /// overload answer lengthens the job's overload streak, anything else ends it.
    pub async fn requeue(
        &self,
        id: &str,
        reason: &str,
        overload: bool,
        (now, run_after): (i64, i64),
    ) -> worker::Result<()> {
        let t = Transition::Requeue;
        let sql = format!(
            "UPDATE jobs SET {}, error = ?2, updated_at = ?3, run_after = ?5, \
             overloads = CASE WHEN ?4 THEN overloads + 1 ELSE 0 END WHERE id = ?1 AND {}",
            t.set(),
            t.guard()
        );
        self.run(
            &sql,
            &[
                id.into(),
                reason.into(),
                num(now),
                JsValue::from_bool(overload),
                num(run_after),
            ],
        )
        .await?;
        Ok(())
    }

    /// Puts a claimed job back to waiting without spending its attempt: the call failed for
    /// its route's sake, not the job's (a breaker's probe that found the route still down, a
    /// route that refused our credentials), so it must not bring the job nearer its dead letter.
    pub async fn release_unspent(
        &self,
        id: &str,
        reason: &str,
        (now, run_after): (i64, i64),
    ) -> worker::Result<()> {
        let t = Transition::Requeue;
        let sql = format!(
            "UPDATE jobs SET {}, error = ?2, updated_at = ?3, run_after = ?4, \
             attempts = MAX(attempts - 1, 0) WHERE id = ?1 AND {}",
            t.set(),
            t.guard()
        );
        self.run(&sql, &[id.into(), reason.into(), num(now), num(run_after)])
            .await?;
        Ok(())
    }

    /// Retries exhausted: the job is dead-lettered with the failure that ended it — by the
    /// consumer or poller that saw the last failure (`Transition::DeadLetter`), or by the
    /// dead-letter queue (`Transition::DeadLetterQueued`, only a job still waiting).
    pub fn dead_letter(
        &self,
        t: Transition,
        id: &str,
        f: &Failure,
        now: i64,
        scope: Scope<'_>,
    ) -> worker::Result<Statement> {
        debug_assert_eq!(t.to(), Status::DeadLettered);
        let sql = format!(
            "UPDATE jobs SET {}, error = ?2, error_class = ?4, completed_at = ?3, \
             updated_at = ?3 WHERE id = ?1 AND {}",
            t.set(),
            scope.guard(t, 5)
        );
        self.statement(
            &sql,
            &[
                id.into(),
                f.reason.as_str().into(),
                num(now),
                f.class.as_str().into(),
                scope.batch(),
            ],
        )
    }

    /// Each user's oldest new sync job on `lane` (never attempted, not PDFs, not expired), with
    /// the user's share weight: what a delivered message may run instead of its own job
    /// (`pipeline::fair`). At most 100 users, the longest-waiting first.
    pub async fn fair_candidates(
        &self,
        lane: Lane,
        now: i64,
    ) -> worker::Result<Vec<pipeline::fair::Candidate>> {
        // SQLite answers the bare columns of a MIN() group from the row holding the minimum.
        let sql = format!(
            "SELECT j.id, j.user_id, MIN(j.created_at) AS created_at, \
             COALESCE(MAX(b.share_weight, 1), 1) AS weight \
             FROM jobs j LEFT JOIN user_budgets b ON b.user_id = j.user_id \
             WHERE j.lane = ?1 AND j.status = {} AND j.attempts = 0 AND j.mode = '{}' \
             AND j.kind != '{}' \
             AND (j.expires_at IS NULL OR j.expires_at > ?2) AND j.held_at IS NULL \
             AND NOT EXISTS (SELECT 1 FROM pauses p WHERE (p.scope = 'lane' AND p.value = j.lane) \
             OR (p.scope = 'model' AND p.value = j.model) OR (p.scope = 'user' AND p.value = j.user_id)) \
             GROUP BY j.user_id ORDER BY created_at LIMIT 100",
            Status::Queued.sql(),
            Mode::Sync.as_str(),
            Kind::Pdf.as_str()
        );
        self.all(&sql, &[lane.as_str().into(), num(now)]).await
    }

    /// Records one call made for a job (replacing a record of the same attempt number, which
    /// only a redelivery after a crash can produce).
    pub async fn record_attempt(&self, a: &Attempt<'_>) -> worker::Result<()> {
        self.run(
            "INSERT OR REPLACE INTO job_attempts \
             (job_id, n, model, started_at, ended_at, outcome, error, route) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            &[
                a.job_id.into(),
                num(a.n as i64),
                opt(a.model),
                num(a.started_at),
                num(a.ended_at),
                a.outcome.as_str().into(),
                opt(a.error),
                route_column(a.route),
            ],
        )
        .await?;
        Ok(())
    }

    /// The calls of these jobs, by job and oldest first.
    pub async fn attempts(&self, job_ids: &[String]) -> worker::Result<Vec<(String, AttemptView)>> {
        if job_ids.is_empty() {
            return Ok(Vec::new());
        }
        let (sql, args) = attempts_sql(job_ids);
        attempts_of(&self.result(&sql, &args).await?)
    }

    /// [`Store::attempts`]' statement (at most 100 jobs), to run with others (read by
    /// [`attempts_of`]).
    pub fn attempts_statement(&self, job_ids: &[String]) -> worker::Result<Statement> {
        let (sql, args) = attempts_sql(job_ids);
        self.statement(&sql, &args)
    }
}

/// The calls of these jobs, by job and oldest first: the query and its parameters.
fn attempts_sql(job_ids: &[String]) -> (String, Vec<JsValue>) {
    let (marks, args) = super::with_ids(Vec::new(), job_ids);
    (
        format!(
            "SELECT job_id, n, model, started_at, ended_at, outcome, error, route \
             FROM job_attempts WHERE job_id IN ({marks}) ORDER BY job_id, n"
        ),
        args,
    )
}

/// The result of [`Store::attempts_statement`]: (job, call) pairs.
pub fn attempts_of(r: &worker::D1Result) -> worker::Result<Vec<(String, AttemptView)>> {
    #[derive(Deserialize)]
    struct Row {
        job_id: String,
        n: f64,
        model: Option<String>,
        started_at: f64,
        ended_at: f64,
        outcome: AttemptOutcome,
        error: Option<String>,
        #[serde(default)]
        route: Option<Provider>,
    }
    Ok(r.results::<Row>()?
        .into_iter()
        .map(|r| {
            let entry = AttemptView {
                n: r.n.max(0.0) as u32,
                model: r.model,
                started_at: r.started_at as i64,
                ended_at: r.ended_at as i64,
                outcome: r.outcome,
                error: r.error,
                provider: r.route,
            };
            (r.job_id, entry)
        })
        .collect())
}

/// `fast` for an answer of fast mode (`jobs.speed`, migration 0024), else NULL.
fn fast(usage: Option<&Usage>) -> JsValue {
    match usage.is_some_and(Usage::is_fast) {
        true => "fast".into(),
        false => JsValue::NULL,
    }
}

/// What a paid answer spent, in the order the settling statements bind it: its four token
/// counts, then its cost (0 when the model has no price).
pub(super) fn spent(u: &Usage, cost: Option<UsdMicros>) -> [JsValue; 5] {
    [
        num(u.input_tokens as i64),
        num(u.output_tokens as i64),
        num(u.cache_creation_input_tokens as i64),
        num(u.cache_read_input_tokens as i64),
        money(cost.unwrap_or_default()),
    ]
}
