//! Batch-mode jobs join an accumulation in D1 (their queue message is acked: a Message Batch may
//! wait an hour for company, a queue message may not). A flush — when `BATCH_FLUSH_SIZE` jobs
//! wait or the oldest has waited `BATCH_FLUSH_AGE_S` — claims waiting jobs in D1 *before* its
//! create call, sends one Message Batch, and marks them `submitted`; the poller settles them.
//!
//! Paying twice is what the order prevents. The create call has three endings
//! (`pipeline::batching::after_create`):
//! - an answer: the jobs are marked `submitted` with the batch id;
//! - an error answer: nothing was created; the claim is released (or the job the API named as
//!   invalid fails);
//! - no answer (timeout, network, or the Worker died): the batch may or may not exist. The flush
//!   stays `claimed`, its jobs are never sent again, and [`recover`] later looks for the batch
//!   among the account's batches (`pipeline::batching::recover`): adopted if found, released if
//!   the create certainly never reached the API.

use pipeline::anthropic::{inline, BatchRequest};
use pipeline::batching::{self, Created, Recovery, Unknown};
use pipeline::clock::parse_rfc3339;
use pipeline::dto::{FlushReport, RecoveryReport};
use pipeline::envelope::{costs, Allowance, Cost};
use pipeline::outcome::describe;
use pipeline::outcome::Failure;

use crate::config::now_ms;
use crate::requests::{inline_pdf, push_expanded, request_of};
use crate::services::{new_id, AppState};
use crate::store::flushes::Stranded;
use crate::store::lifecycle::Scope;
use crate::store::{JobRow, Statement};

/// At most this many flushes per run (each one create call), so one invocation stays bounded;
/// within it, the invocation's share decides (`pipeline::envelope`).
const MAX_FLUSHES_PER_RUN: usize = 10;

/// Flushes while a flush is due (by size or age) — or, with `force`, while any job waits —
/// and while `allowance` has room for another flush.
pub async fn flush_due(state: &AppState, force: bool, allowance: &mut Allowance) -> FlushReport {
    flush_due_from(state, force, None, allowance).await
}

/// [`flush_due`], starting from the waiting count the caller has read (`first`: jobs waiting
/// and the oldest's accumulation time — the cron reads it in its one round trip).
pub async fn flush_due_from(
    state: &AppState,
    force: bool,
    mut first: Option<(u32, Option<i64>)>,
    allowance: &mut Allowance,
) -> FlushReport {
    let mut report = FlushReport::default();
    for _ in 0..MAX_FLUSHES_PER_RUN {
        let waiting = match first.take() {
            Some(w) => Ok(w),
            None => state.store.waiting().await,
        };
        let due = match waiting {
            Ok((n, oldest)) => {
                (force && n > 0) || batching::flush_due(n, oldest, now_ms(), &state.config.timing)
            }
            Err(e) => {
                report.errors.push(format!("counting waiting jobs: {e}"));
                break;
            }
        };
        if !due {
            break;
        }
        // A flush and at least one row, inside the run's time, or the rest waits for the next.
        let fits = allowance.fits(&(costs::FLUSH + costs::FLUSH_PDF_UPLOAD_ROW)) > 0;
        if !fits || !state.meter.may_start() {
            report.left_for_next_run = true;
            break;
        }
        match flush_once(state, &mut report, allowance).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                report.errors.push(format!("flush: {e}"));
                break;
            }
        }
    }
    if !report.errors.is_empty() {
        worker::console_error!("flush: {:?}", report.errors);
    }
    report
}

/// One flush: claim, build, create, mark. Answers whether another flush may follow at once.
async fn flush_once(
    state: &AppState,
    report: &mut FlushReport,
    allowance: &mut Allowance,
) -> worker::Result<bool> {
    allowance.take(&costs::FLUSH);
    let flush = format!("flush_{}", new_id()?);
    let size = batching::flush_size(&state.config.timing);
    let rows = state.store.claim_flush(&flush, size, now_ms()).await?;
    if rows.is_empty() {
        // Another flush took them first.
        return Ok(false);
    }
    let build = build(state, &rows, allowance, report).await?;
    let left = !build.rest.is_empty();
    let (requests, inlines, ours) = record_build(state, &flush, build).await?;
    if requests.is_empty() {
        if left {
            report.left_for_next_run = true;
        }
        let why = if left {
            "the invocation's share is spent; the jobs wait for the next run"
        } else {
            "no request could be built"
        };
        state.store.release_flush(&flush, why, now_ms()).await?;
        return Ok(!left);
    }
    create(state, &flush, requests, inlines, &ours, report).await
}

/// What one flush's rows became: the create call's requests (with the R2 key of each one's
/// inline PDF and whether the request is one of ours), the rows left for the next flush, and
/// the statements that fail the rows that cannot be sent.
#[derive(Default)]
struct Build<'a> {
    requests: Vec<BatchRequest>,
    inlines: Vec<Option<&'a str>>,
    ours: Vec<bool>,
    bytes: usize,
    rest: Vec<&'a str>,
    statements: Vec<Statement>,
}

/// One row's request, or why it cannot be sent.
enum RowRequest<'a> {
    /// Sized at its largest, with the R2 key of a PDF that goes inline.
    Request(Box<BatchRequest>, Option<&'a str>, usize),
    Fails(Failure),
}

/// Builds the claimed rows' requests one by one, stopping at the byte limit, so that a flush
/// of large PDFs never holds more than one create call's worth in memory.
async fn build<'a>(
    state: &AppState,
    rows: &'a [JobRow],
    allowance: &mut Allowance,
    report: &mut FlushReport,
) -> worker::Result<Build<'a>> {
    let mut b = Build::default();
    let now = now_ms();
    // Read once for the whole flush, not once per row.
    let watch = crate::models_watch::last(state).await.ok().flatten();
    for row in rows {
        if !b.rest.is_empty() || !allowance.take(&row_cost(state, row)) {
            // Past the byte limit or the invocation's share: first in line for the next flush.
            b.rest.push(&row.id);
            continue;
        }
        match row_request(state, row, watch.as_ref()).await {
            RowRequest::Fails(failure) => {
                report.jobs_failed += 1;
                let fail = state
                    .store
                    .fail(&row.id, &failure, None, now, Scope::Sync)?;
                b.statements.push(fail);
            }
            RowRequest::Request(r, inline, size) => {
                if batching::fits(b.requests.len(), b.bytes, size, batching::MAX_FLUSH_BYTES) {
                    b.bytes += size;
                    b.requests.push(*r);
                    b.inlines.push(inline);
                    b.ours.push(row.kind != pipeline::status::Kind::Prompt);
                } else {
                    b.rest.push(&row.id);
                }
            }
        }
    }
    Ok(b)
}

/// `row`'s request in a batch, sized at its largest (every breakpoint at 1 hour; the
/// breakpoints are set once the whole batch is known; a PDF that goes inline counts at its
/// base64's length) — or the failure of a job whose model the API stopped listing
/// (`crate::models_watch`) or whose request cannot be built.
async fn row_request<'a>(
    state: &AppState,
    row: &'a JobRow,
    watch: Option<&pipeline::models::watch::WatchReport>,
) -> RowRequest<'a> {
    let model = row
        .model
        .as_deref()
        .unwrap_or(pipeline::models::DEFAULT_MODEL);
    if let Some(why) = watch.and_then(|w| w.refuses(model)) {
        return RowRequest::Fails(Failure::new(why));
    }
    let params = match request_of(state, row).await {
        Ok(params) => params,
        Err(e) => {
            return RowRequest::Fails(Failure::new(format!("its request cannot be built: {e}")))
        }
    };
    let r = BatchRequest {
        custom_id: row.id.to_string(),
        params: params.with_one_hour_cache(),
    };
    let json = serde_json::to_string(&r).unwrap_or_default();
    let inline = inline_pdf(row, &json);
    let size = match inline {
        Some((key, pdf)) => inline::expanded_len(json.len() as u64, key, pdf) as usize,
        None => json.len(),
    };
    RowRequest::Request(Box::new(r), inline.map(|(key, _)| key), size)
}

/// Writes what the build decided in one round trip — the failed rows, the rows that did not
/// fit back to waiting (first in line for the next flush), the flush's size — and hands on
/// what is to be sent.
async fn record_build<'a>(
    state: &AppState,
    flush: &str,
    b: Build<'a>,
) -> worker::Result<(Vec<BatchRequest>, Vec<Option<&'a str>>, Vec<bool>)> {
    let store = &state.store;
    let mut statements = b.statements;
    for id in b.rest {
        statements.push(store.unclaim(id, flush)?);
    }
    statements.push(store.size_flush(flush, b.requests.len(), now_ms())?);
    store.batch(statements).await?;
    Ok((b.requests, b.inlines, b.ours))
}

/// Sends the flush's one create call and records its ending (`pipeline::batching::after_create`).
async fn create(
    state: &AppState,
    flush: &str,
    mut requests: Vec<BatchRequest>,
    inlines: Vec<Option<&str>>,
    ours: &[bool],
    report: &mut FlushReport,
) -> worker::Result<bool> {
    // A prefix another request of the batch reads is cached for an hour; a lone one of ours is
    // not cached at all (`pipeline::batching::cache`).
    batching::cache::shared_breakpoints(&mut requests, ours);
    let ids: Vec<String> = requests.iter().map(|r| r.custom_id.clone()).collect();
    let body = match create_body(state, requests, &inlines).await {
        Ok(body) => body,
        Err(e) => {
            // Nothing was sent: the jobs wait again for the next flush.
            let why = format!("the batch's body could not be assembled: {e}");
            state.store.release_flush(flush, &why, now_ms()).await?;
            report.errors.push(why);
            return Ok(false);
        }
    };
    let created = state.anthropic.create_batch_body(body).await;
    let created = batching::after_create(created.as_ref().map(|b| b.id.clone()));
    record_created(state, flush, &ids, created, report).await
}

/// Records a create call's ending; answers whether another flush may follow at once.
async fn record_created(
    state: &AppState,
    flush: &str,
    ids: &[String],
    created: Created,
    report: &mut FlushReport,
) -> worker::Result<bool> {
    let store = &state.store;
    match created {
        Created::Batch(batch) => {
            let marked = store.mark_created(flush, &batch, now_ms()).await;
            report.batches_created += 1;
            report.jobs_submitted += ids.len() as u32;
            if let Err(e) = marked {
                // The batch exists; the flush stays claimed and recovery adopts it by its size
                // and time. Nothing is sent again meanwhile.
                report.errors.push(format!(
                    "batch {batch} created but not recorded ({e}); recovery will adopt it"
                ));
            }
            Ok(true)
        }
        Created::Refused { culprit, failure } => {
            // The request the API named fails alone and the rest wait again; without a name
            // the whole batch is refused for good.
            let culprit = culprit.and_then(|i| ids.get(i));
            let mut statements = Vec::new();
            for id in ids.iter().filter(|id| culprit.is_none_or(|c| c == *id)) {
                statements.push(store.fail(id, &failure, None, now_ms(), Scope::Sync)?);
                report.jobs_failed += 1;
            }
            store.batch(statements).await?;
            store
                .release_flush(flush, &failure.reason, now_ms())
                .await?;
            Ok(culprit.is_some())
        }
        Created::NotNow(reason) => {
            store.release_flush(flush, &reason, now_ms()).await?;
            report
                .errors
                .push(format!("batch create refused: {reason}"));
            Ok(false)
        }
        Created::Unknown(note) => {
            store.note_flush(flush, &note, now_ms()).await?;
            report.outcomes_unknown += 1;
            report.errors.push(format!("{flush}: {note}"));
            Ok(false)
        }
    }
}

/// The create call's body, `{"requests":[…]}`, assembled in JS memory a request at a time:
/// each request's JSON is made once and handed over, and a PDF that goes inline is put in as
/// base64 from R2 a slice at a time (`crate::requests::push_expanded`) — the Worker never holds the
/// batch, whose 32 MB its memory would keep for life.
async fn create_body(
    state: &AppState,
    requests: Vec<BatchRequest>,
    inlines: &[Option<&str>],
) -> worker::Result<wasm_bindgen::JsValue> {
    use wasm_bindgen::JsValue;
    let parts = js_sys::Array::new();
    parts.push(&JsValue::from_str("{\"requests\":["));
    for (i, (request, key)) in requests.into_iter().zip(inlines).enumerate() {
        if i > 0 {
            parts.push(&JsValue::from_str(","));
        }
        let json =
            serde_json::to_string(&request).map_err(|e| worker::Error::RustError(e.to_string()))?;
        drop(request);
        push_expanded(state, &parts, &json, *key).await?;
    }
    parts.push(&JsValue::from_str("]}"));
    Ok(worker::web_sys::Blob::new_with_str_sequence(&parts)?.into())
}

/// What building `row`'s request asks of the platform (`pipeline::envelope::costs`).
fn row_cost(state: &AppState, row: &JobRow) -> Cost {
    use pipeline::status::Kind;
    match row.kind {
        Kind::Feedback => costs::FLUSH_ROW_FROM_ITS_ROW,
        Kind::Prompt => costs::FLUSH_PROMPT_ROW,
        Kind::Pdf if row.file_id.is_some() => costs::FLUSH_ROW_FROM_ITS_ROW,
        Kind::Pdf if crate::files::enabled(state) => costs::FLUSH_PDF_UPLOAD_ROW,
        Kind::Pdf => costs::FLUSH_PDF_BASE64_ROW,
    }
}

/// Resolves flushes left `claimed` once their create call can no longer be in flight: the
/// account's recent batches that no flush knows are matched by size and time (see
/// `pipeline::batching::recover`).
pub async fn recover(state: &AppState) -> worker::Result<RecoveryReport> {
    let stranded = state
        .store
        .stranded_flushes(stranded_before(state, now_ms()))
        .await?;
    recover_these(state, stranded).await
}

/// Flushes claimed before this are stranded: their create call can no longer be in flight.
pub fn stranded_before(state: &AppState, now: i64) -> i64 {
    let timeout = state.config.timing.call_timeout_ms as i64;
    now - timeout - batching::margin_ms(timeout)
}

/// [`recover`] of the stranded flushes the caller has read (the cron, in its one round trip).
pub async fn recover_these(
    state: &AppState,
    stranded: Vec<Stranded>,
) -> worker::Result<RecoveryReport> {
    let mut report = RecoveryReport::default();
    let now = now_ms();
    let timeout = state.config.timing.call_timeout_ms as i64;
    let Some(oldest) = stranded.iter().map(|s| s.claimed_at).min() else {
        return Ok(report);
    };
    let mut unknown = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..10 {
        let page = state
            .anthropic
            .list_batches(after.as_deref())
            .await
            .map_err(|e| worker::Error::RustError(describe(&e)))?;
        let mut older = false;
        for b in &page.data {
            let created = b.created_at.as_deref().and_then(parse_rfc3339).unwrap_or(0);
            older |= created < oldest - batching::margin_ms(timeout);
            let c = &b.request_counts;
            unknown.push(Unknown {
                id: b.id.clone(),
                created_at: created,
                requests: c.processing + c.succeeded + c.errored + c.canceled + c.expired,
            });
        }
        if older || !page.has_more {
            break;
        }
        after = page.last_id.clone();
    }
    // Keep only the batches no flush (and no job) knows.
    let ids: Vec<String> = unknown.iter().map(|u| u.id.clone()).collect();
    let known = state.store.known_batches(&ids).await?;
    unknown.retain(|u| !known.contains(&u.id));
    for s in stranded {
        match batching::recover(s.claimed_at, s.jobs.max(0) as u64, &unknown, now, timeout) {
            Recovery::Adopt(batch) => {
                worker::console_log!("recovery: flush {} adopts batch {batch}", s.id);
                state.store.mark_created(&s.id, &batch, now_ms()).await?;
                unknown.retain(|u| u.id != batch);
                report.adopted += 1;
            }
            Recovery::Release => {
                worker::console_log!("recovery: flush {} never reached the API", s.id);
                state
                    .store
                    .release_flush(&s.id, "the create call never reached the API", now_ms())
                    .await?;
                report.released += 1;
            }
            Recovery::Wait => report.waiting += 1,
        }
    }
    Ok(report)
}
