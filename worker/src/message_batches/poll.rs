//! The batch mode's poller (run by the cron, and on demand): for every Anthropic batch that
//! still has submitted jobs, retrieve it; once ended, stream its JSONL results and settle them
//! a chunk of lines per transaction, the read's cursor in the same transaction, at most
//! `BATCH_RESULTS_PER_RUN` lines per run across every batch, and only as many batches and
//! chunks as the invocation's share allows (`pipeline::envelope`) — a batch of 100,000 answers
//! settles in constant memory over as many runs as it takes, and a restart resumes after the
//! last chunk. Guarded updates make it safe to run twice or concurrently.

use futures_util::StreamExt;
use pipeline::answer::{settle_answer, End};
use pipeline::anthropic::jsonl::{Line, LineReader};
use pipeline::anthropic::{parse_result_line, BatchResult, BatchResultLine};
use pipeline::batching::{
    after_missing, bill_after_cancel, line_outcome, lost_batch_job, Missing, Outcome,
};
use pipeline::dto::PollReport;
use pipeline::envelope::{costs, Allowance};
use pipeline::outcome::Failure;
use pipeline::outcome::{describe, CallOutcome};
use pipeline::pricing::Tier;
use pipeline::status::{Lane, Status, Transition};

use crate::config::now_ms;
use crate::refusals::Refused;
use crate::routing::Rerouted;
use crate::services::AppState;
use crate::store::lifecycle::Scope;
use crate::store::{JobRow, Statement};

pub async fn poll(state: &AppState, allowance: &mut Allowance) -> worker::Result<PollReport> {
    poll_these(state, state.store.open_batches().await?, allowance).await
}

/// [`poll`] of the open batches the caller has read (the cron, in its one round trip).
pub async fn poll_these(
    state: &AppState,
    open: Vec<String>,
    allowance: &mut Allowance,
) -> worker::Result<PollReport> {
    let mut report = PollReport::default();
    let mut run = Run {
        allowance,
        lines_left: state.config.batch_results_per_run,
        meter: &state.meter,
    };
    for batch_id in open {
        if !run.meter.may_start() || !run.allowance.take(&costs::BATCH_CHECK) {
            // The rest are looked at next run (the open list is oldest first).
            report.left_for_next_run = true;
            break;
        }
        report.batches_checked += 1;
        let batch = match state.anthropic.retrieve_batch(&batch_id).await {
            Ok(b) => b,
            Err(CallOutcome::Http { status: 404, .. }) => {
                missing(state, &batch_id, &mut report, &mut run).await?;
                continue;
            }
            Err(e) => {
                report.errors.push(format!("{batch_id}: {}", describe(&e)));
                continue;
            }
        };
        if !batch.ended() {
            continue;
        }
        let Some(url) = batch.results_url.as_deref() else {
            report
                .errors
                .push(format!("{batch_id}: ended without a results_url"));
            continue;
        };
        report.batches_ended += 1;
        // Its duration, for the deadline router's estimate (once; before its jobs settle).
        let times = (batch.created_at.as_deref(), batch.ended_at.as_deref());
        if let (Some(created), Some(ended)) = (
            times.0.and_then(pipeline::clock::parse_rfc3339),
            times.1.and_then(pipeline::clock::parse_rfc3339),
        ) {
            state
                .store
                .record_batch_times(&batch_id, created, ended)
                .await?;
        }
        settle_batch(state, &batch_id, url, &mut report, &mut run).await?;
    }
    report.wasm_memory_bytes = crate::meter::wasm_memory();
    Ok(report)
}

/// A batch the API answers 404 for (`pipeline::batching::after_missing`): noted the first time,
/// waited for `BATCH_LOST_AFTER_S`, then given up — its jobs go back to the accumulation for a
/// new batch (or are dead-lettered after their last try), the ones canceled inside it stop
/// waiting for a bill that cannot be read, and the loss is counted as possible unrecorded spend.
async fn missing(
    state: &AppState,
    batch_id: &str,
    report: &mut PollReport,
    run: &mut Run<'_>,
) -> worker::Result<()> {
    let store = &state.store;
    let key = format!("batch_missing:{batch_id}");
    let now = now_ms();
    let first = store.last_beat(&key).await?.map(|b| b.at as i64);
    let grace_ms = state.config.batch_lost_after_s as i64 * 1000;
    match after_missing(first, now, grace_ms) {
        Missing::FirstSeen => {
            store.beat(&key, now, "404").await?;
            report.errors.push(format!(
                "{batch_id}: unknown to the API (404); its jobs are released if it stays unknown for {} s",
                state.config.batch_lost_after_s
            ));
        }
        Missing::Waiting { since_ms } => report.errors.push(format!(
            "{batch_id}: unknown to the API (404) for {} s",
            since_ms / 1000
        )),
        Missing::GiveUp => {
            let (released, all) = end_remaining(state, batch_id, report, run, |row| {
                lost_batch_job(batch_id, row.batch_tries.max(0) as u32)
            })
            .await?;
            if !all {
                // The run's share is spent: the next run releases the rest (and counts it).
                store
                    .count_by(Unrecorded::LOST_BATCH_JOBS, released, now)
                    .await?;
                report.batches_resumable += 1;
                report.left_for_next_run = true;
                return Ok(());
            }
            use pipeline::ops::metrics::Unrecorded;
            store.count(Unrecorded::LOST_BATCHES, now).await?;
            store
                .count_by(Unrecorded::LOST_BATCH_JOBS, released, now)
                .await?;
            store.forget_beat(&key).await?;
            report.batches_lost += 1;
            report.errors.push(format!(
                "{batch_id}: given up after {} s unknown to the API; {released} jobs released",
                state.config.batch_lost_after_s,
            ));
        }
    }
    Ok(())
}

/// Where and when a batch job's [`Outcome`] is carried out.
#[derive(Clone, Copy)]
struct Done<'a> {
    batch_id: &'a str,
    now: i64,
}

/// The statement that carries out `outcome` for the submitted job `id` of a batch, counted in
/// `report`; a dead-lettered job's id joins `dead`, to be announced once the batch is written.
fn carry_out(
    state: &AppState,
    id: &str,
    outcome: Outcome,
    Done { batch_id, now }: Done<'_>,
    report: &mut PollReport,
    dead: &mut Vec<String>,
) -> worker::Result<Statement> {
    let store = &state.store;
    let scope = Scope::InBatch(batch_id);
    Ok(match outcome {
        Outcome::Fail(reason) => {
            report.jobs_failed += 1;
            store.fail(id, &Failure::new(reason), None, now, scope)?
        }
        Outcome::Resubmit(reason) => {
            report.jobs_resubmitted += 1;
            store.resubmit(id, batch_id, &reason, now)?
        }
        Outcome::DeadLetter(reason) => {
            report.jobs_dead_lettered += 1;
            dead.push(id.to_owned());
            store.dead_letter(
                Transition::DeadLetter,
                id,
                &Failure::new(reason),
                now,
                scope,
            )?
        }
        Outcome::Canceled => {
            report.jobs_canceled += 1;
            store.cancel_in_batch(
                id,
                batch_id,
                "the batch was canceled before this request ran",
                now,
            )?
        }
    })
}

/// Result lines settled per D1 transaction.
const CHUNK_LINES: usize = 100;
/// Rows per statement batch when ending what the results did not name.
const SLICE: u32 = 500;
/// The longest result line read: a whole Message (128k output tokens are well under 1 MB of
/// JSON); a longer line is an error, not an allocation.
const MAX_LINE: usize = 8 << 20;

/// What one poll may still settle: its share of the invocation, and the lines of the
/// `BATCH_RESULTS_PER_RUN` budget that are left.
struct Run<'a> {
    allowance: &'a mut Allowance,
    lines_left: u64,
    /// The invocation's clock: a cron run starts no chunk past its minute.
    meter: &'a crate::meter::Meter,
}

impl Run<'_> {
    /// Takes one chunk's lines and calls if both fit; answers whether they did.
    fn take_chunk(&mut self) -> bool {
        if self.lines_left == 0 || !self.meter.may_start() {
            return false;
        }
        if !self.allowance.take(&costs::RESULT_CHUNK) {
            return false;
        }
        self.lines_left = self.lines_left.saturating_sub(CHUNK_LINES as u64);
        true
    }

    /// Announces these dead letters to the webhook (best effort) while the share lasts; the
    /// rest are counted and logged, not announced: the DLQ alert still counts them.
    async fn announce(&mut self, state: &AppState, dead: Vec<String>, report: &mut PollReport) {
        if state.config.notify_webhook_url.is_none() {
            return;
        }
        for id in dead {
            if self.allowance.take(&costs::DEAD_LETTER_ANNOUNCED) {
                crate::alerts::announce_dead_letter(state, &id).await;
            } else {
                report.dead_letters_unannounced += 1;
                worker::console_error!(
                    "dead letter {id}: not announced, the invocation's share is spent"
                );
            }
        }
    }
}

/// Reads an ended batch's results from where the last run stopped and settles them a chunk at
/// a time while the run's share and line budget last; once the body is read to its end, ends
/// what it did not name.
async fn settle_batch(
    state: &AppState,
    batch_id: &str,
    url: &str,
    report: &mut PollReport,
    run: &mut Run<'_>,
) -> worker::Result<()> {
    if run.lines_left == 0 || run.allowance.fits(&costs::RESULT_CHUNK) == 0 {
        // Nothing of it can settle in this run: not even its results are fetched.
        report.batches_resumable += 1;
        report.left_for_next_run = true;
        return Ok(());
    }
    let (offset, lines_before) = state.store.results_cursor(batch_id).await?;
    let mut stream = match state.anthropic.batch_results(url).await {
        Ok(s) => s,
        Err(e) => {
            report
                .errors
                .push(format!("{batch_id} results: {}", describe(&e)));
            return Ok(());
        }
    };
    let routing = crate::routing::Lines::new(state, state.store.rescued(batch_id).await?);
    let mut reader = LineReader::new(offset, lines_before, MAX_LINE);
    let mut chunks = Chunks {
        batch_id,
        lines: Vec::with_capacity(CHUNK_LINES),
        read: 0,
        routing,
    };
    loop {
        let (lines, ended) = next_lines(&mut stream, &mut reader, batch_id, report).await?;
        for line in lines {
            chunks.lines.push(line);
            if chunks.lines.len() == CHUNK_LINES && !chunks.settle(state, report, run).await? {
                // The rest waits for the next run: it resumes after the last chunk settled.
                resumable(report, chunks.read);
                return Ok(());
            }
        }
        if ended {
            break;
        }
    }
    if !chunks.lines.is_empty() && !chunks.settle(state, report, run).await? {
        resumable(report, chunks.read);
        return Ok(());
    }
    report.result_lines += chunks.read;
    let (_, all) = end_remaining(state, batch_id, report, run, |_| {
        Outcome::Fail("the job is missing from its batch's results".into())
    })
    .await?;
    if !all {
        // Read to its end; what it did not name is ended by the next run.
        report.batches_resumable += 1;
        report.left_for_next_run = true;
    }
    Ok(())
}

/// The lines the body's next piece completes, and whether the body has ended (its last line
/// then comes without a newline).
async fn next_lines(
    stream: &mut worker::ByteStream,
    reader: &mut LineReader,
    batch_id: &str,
    report: &mut PollReport,
) -> worker::Result<(Vec<Line>, bool)> {
    let read = match stream.next().await {
        Some(bytes) => {
            let bytes = bytes?;
            report.peak_chunk_bytes = report.peak_chunk_bytes.max(bytes.len() as u64);
            let lines = reader.feed(&bytes).map_err(|e| {
                worker::Error::RustError(format!(
                    "{batch_id}: result line {} is longer than {} bytes",
                    e.number, e.limit
                ))
            })?;
            (lines, false)
        }
        None => (reader.end().into_iter().collect(), true),
    };
    report.peak_line_bytes = report.peak_line_bytes.max(reader.peak as u64);
    Ok(read)
}

/// A batch's results being read: the chunk of lines not yet settled, and the lines settled.
struct Chunks<'a, 's> {
    batch_id: &'a str,
    lines: Vec<Line>,
    read: u64,
    routing: crate::routing::Lines<'s>,
}

impl Chunks<'_, '_> {
    /// Settles the chunk if the run has room for it; answers whether it had.
    async fn settle(
        &mut self,
        state: &AppState,
        report: &mut PollReport,
        run: &mut Run<'_>,
    ) -> worker::Result<bool> {
        if !run.take_chunk() {
            return Ok(false);
        }
        let batch_id = self.batch_id;
        let (n, dead) =
            settle_lines(state, batch_id, &self.lines, &mut self.routing, report).await?;
        self.read += n;
        run.announce(state, dead, report).await;
        self.lines.clear();
        Ok(true)
    }
}

/// Counts a batch left part-read: its next lines wait for the next run.
fn resumable(report: &mut PollReport, read: u64) {
    report.result_lines += read;
    report.batches_resumable += 1;
    report.left_for_next_run = true;
}

/// What settling a chunk's lines writes and hands on: the statements of its one transaction,
/// the jobs dead-lettered (for the caller to announce within its share), and the jobs moved to
/// the sync lane (sent once the transaction has landed).
#[derive(Default)]
struct Settling {
    statements: Vec<Statement>,
    dead: Vec<String>,
    to_sync: Vec<String>,
}

/// Settles the jobs these lines name, with the cursor after the last line, in one transaction;
/// answers the lines, and the jobs dead-lettered (for the caller to announce within its share).
async fn settle_lines(
    state: &AppState,
    batch_id: &str,
    lines: &[Line],
    routing: &mut crate::routing::Lines<'_>,
    report: &mut PollReport,
) -> worker::Result<(u64, Vec<String>)> {
    let store = &state.store;
    let now = now_ms();
    let parsed: Vec<_> = lines
        .iter()
        .filter_map(|l| match parse_result_line(&l.text, l.number) {
            Ok(line) => Some(line),
            Err(e) => {
                report.errors.push(format!("{batch_id}: {e}"));
                None
            }
        })
        .collect();
    let ids: Vec<String> = parsed.iter().map(|l| l.custom_id.clone()).collect();
    let rows = store.named_in_batch(batch_id, &ids).await?;
    let refused = refusals(state, &parsed, &rows);
    store_answers(state, &parsed, &rows, &refused).await?;
    let before = ChunkCounts::of(report);
    let mut out = Settling::default();
    let done = Done { batch_id, now };
    for line in &parsed {
        let Some(row) = rows.iter().find(|r| r.id == line.custom_id) else {
            continue; // settled already, or not ours
        };
        let refused = refused.iter().find(|r| r.row.id == row.id);
        settle_line(state, row, line, refused, routing, done, report, &mut out).await?;
    }
    if let Some(last) = lines.last() {
        let cursor = store.advance_results(batch_id, last.end_offset, last.number)?;
        out.statements.push(cursor);
    }
    store.batch(out.statements).await?;
    before.log(batch_id, lines.len(), out.dead.len(), report, now);
    if !out.to_sync.is_empty() {
        // Unsent ones stay queued: the reconciler sends them after its window.
        let unsent = state.lanes.send_many(Lane::High, &out.to_sync).await;
        worker::console_log!(
            "routing: {} jobs of {batch_id} moved to sync ({} not sent)",
            out.to_sync.len(),
            unsent.len()
        );
    }
    Ok((lines.len() as u64, out.dead))
}

/// One result line's job: billed after a cancel, sent to its fallback, settled with its answer,
/// rerouted, retried or ended — its statement added to the chunk's.
#[allow(clippy::too_many_arguments)] // the chunk's context, handed down unchanged
async fn settle_line(
    state: &AppState,
    row: &JobRow,
    line: &BatchResultLine,
    refused: Option<&Refused<'_>>,
    routing: &mut crate::routing::Lines<'_>,
    done: Done<'_>,
    report: &mut PollReport,
    out: &mut Settling,
) -> worker::Result<()> {
    let store = &state.store;
    let Done { batch_id, now } = done;
    let scope = Scope::InBatch(batch_id);
    // Not submitted: canceled inside the batch, awaiting its bill (named_in_batch).
    if row.status != Status::Submitted {
        out.statements
            .push(bill_after_cancel_of(state, row, line, done, report)?);
        return Ok(());
    }
    if let Some(r) = refused {
        out.statements
            .push(store.fall_back(&row.id, &r.view(now), now, scope)?);
        report.jobs_resubmitted += 1;
        return Ok(());
    }
    if let BatchResult::Succeeded { message } = &line.result {
        let settled = settle_answer(row.kind, message, Tier::Batch, now);
        out.statements
            .push(store.settle(&row.id, &settled, now, scope)?);
        match settled.end {
            End::Complete { .. } => report.jobs_completed += 1,
            End::Fail(_) => report.jobs_failed += 1,
        }
        return Ok(());
    }
    // A deadline's (or a deadline's batch's) canceled and expired lines are the router's.
    match routing.outcome(row, &line.result, now).await? {
        Some(Rerouted::ToSync) => {
            out.statements
                .push(store.reroute_from_batch(&row.id, batch_id, now)?);
            out.to_sync.push(row.id.to_string());
            return Ok(());
        }
        Some(Rerouted::Reaccumulate(rescue_at)) => {
            out.statements
                .push(store.reaccumulate(&row.id, batch_id, rescue_at, now)?);
            report.jobs_resubmitted += 1;
            return Ok(());
        }
        None => {}
    }
    if pipeline::batching::line_lost_its_file(&line.result) {
        out.statements.push(store.forget_file(&row.id)?);
    }
    let tries = row.batch_tries.max(0) as u32;
    if let Some(outcome) = line_outcome(&line.result, tries) {
        let statement = carry_out(state, &row.id, outcome, done, report, &mut out.dead)?;
        out.statements.push(statement);
    }
    Ok(())
}

/// The statement that records what a job canceled inside its batch was billed, if anything.
fn bill_after_cancel_of(
    state: &AppState,
    row: &JobRow,
    line: &BatchResultLine,
    Done { batch_id, now }: Done<'_>,
    report: &mut PollReport,
) -> worker::Result<Statement> {
    let bill = bill_after_cancel(&line.result, now);
    if bill.is_some() {
        report.canceled_billed += 1;
    }
    let (usage, cost) = (bill.map(|b| b.0), bill.and_then(|b| b.1));
    state
        .store
        .record_bill(&row.id, batch_id, usage.as_ref(), cost)
}

/// The report's job counts before a chunk, to log what the chunk did.
struct ChunkCounts(u32, u32, u32);

impl ChunkCounts {
    fn of(report: &PollReport) -> Self {
        Self(
            report.jobs_completed,
            report.jobs_failed,
            report.jobs_resubmitted,
        )
    }

    /// Logs the chunk's line (`pipeline::ops::joblog::BatchChunkLog`).
    fn log(&self, batch_id: &str, lines: usize, dead: usize, report: &PollReport, since: i64) {
        worker::console_log!(
            "{}",
            pipeline::ops::joblog::BatchChunkLog {
                event: "batch.chunk",
                batch_id,
                lines: lines as u64,
                completed: u64::from(report.jobs_completed - self.0),
                failed: u64::from(report.jobs_failed - self.1),
                retried: u64::from(report.jobs_resubmitted - self.2),
                dead_lettered: dead as u64,
                ms: now_ms() - since,
            }
            .line()
        );
    }
}

/// The refusals among these lines that have a fallback (`pipeline::refusal`): their jobs go to
/// a later batch on it.
fn refusals<'a>(
    state: &AppState,
    parsed: &'a [BatchResultLine],
    rows: &'a [JobRow],
) -> Vec<Refused<'a>> {
    parsed
        .iter()
        .filter_map(|line| {
            let BatchResult::Succeeded { message } = &line.result else {
                return None;
            };
            let row = rows
                .iter()
                .find(|r| r.id == line.custom_id && r.status == Status::Submitted)?;
            let model = row.model.as_deref().unwrap_or(&message.model);
            let to = crate::refusals::fallback_of(state, row, model, message)?;
            Some(Refused {
                row,
                model,
                message,
                n: (row.batch_tries.max(0) + 1) as u32,
                tier: Tier::Batch,
                to,
            })
        })
        .collect()
}

/// The answers go to R2 first (create-if-absent), all of the chunk's at once — a refused one
/// apart, where a later delivery does not take it for the job's answer.
async fn store_answers(
    state: &AppState,
    parsed: &[BatchResultLine],
    rows: &[JobRow],
    refused: &[Refused<'_>],
) -> worker::Result<()> {
    use futures_util::future::Either;
    let answers = parsed.iter().filter_map(|line| match &line.result {
        BatchResult::Succeeded { message }
            if rows
                .iter()
                .any(|r| r.id == line.custom_id && r.status == Status::Submitted) =>
        {
            Some(match refused.iter().any(|r| r.row.id == line.custom_id) {
                true => Either::Left(state.blobs.store_refused(&line.custom_id, message)),
                false => Either::Right(state.blobs.store_answer(&line.custom_id, message)),
            })
        }
        _ => None,
    });
    for stored in futures_util::future::join_all(answers).await {
        stored?;
    }
    Ok(())
}

/// Ends what is left of a batch, a slice at a time (it may hold 100,000 jobs): each submitted
/// job by `outcome` — missing from results that were read to their end, or released from a
/// batch given up — and each job canceled inside it stops waiting for a bill that will not come.
/// Answers how many submitted jobs it ended, and whether it ended them all (a slice at a time
/// while the run's share lasts; the next run ends the rest).
async fn end_remaining(
    state: &AppState,
    batch_id: &str,
    report: &mut PollReport,
    run: &mut Run<'_>,
    outcome: impl Fn(&crate::store::JobRow) -> Outcome,
) -> worker::Result<(u64, bool)> {
    let store = &state.store;
    let mut dead = Vec::new();
    let mut ended = 0u64;
    let mut all = true;
    loop {
        if !run.allowance.take(&costs::END_SLICE) {
            all = false;
            break;
        }
        let rows = store.in_batch(batch_id, SLICE).await?;
        let canceled = store.awaiting_bill(batch_id, SLICE).await?;
        if rows.is_empty() && canceled.is_empty() {
            break;
        }
        let now = now_ms();
        let mut statements = Vec::with_capacity(rows.len() + canceled.len());
        for row in &canceled {
            statements.push(store.record_bill(&row.id, batch_id, None, None)?);
        }
        for row in &rows {
            let done = Done { batch_id, now };
            statements.push(carry_out(
                state,
                &row.id,
                outcome(row),
                done,
                report,
                &mut dead,
            )?);
        }
        ended += rows.len() as u64;
        store.batch(statements).await?;
    }
    run.announce(state, dead, report).await;
    Ok((ended, all))
}
