//! Completion webhooks' effects (`pipeline::webhooks` decides): the callback a job names at
//! submission, and the deliveries — due ones from the cron, an admin's re-send — each posted
//! once, signed as the Standard Webhooks specification describes, and recorded.

use pipeline::error::ApiError;
use pipeline::identity::Identity;
use pipeline::webhooks::{
    after_attempt, check_url, secret_key, signature, Callback, Next, TIMEOUT_MS,
};
use worker::{AbortController, Delay, Fetch, Headers, Method, Request, RequestInit};

use crate::config::now_ms;
use crate::services::AppState;
use crate::store::webhooks::{Attempted, Due};

/// The callback of a job submitted by `caller` with `requested` (else the key's default): the
/// URL checked, and refused when nothing could sign its deliveries. All 400s, before anything
/// is stored.
pub fn callback(
    state: &AppState,
    caller: &Identity,
    requested: Option<&str>,
) -> Result<Option<Callback>, ApiError> {
    let Some(url) = requested.or(caller.callback_url.as_deref()) else {
        return Ok(None);
    };
    let url = check_url(url, state.config.webhook_loopback)?;
    if caller.key_id.is_none() && state.config.webhook_secret.is_none() {
        return Err(ApiError::bad_request(
            "invalid_callback_url",
            "callback_url needs a signing secret: send the job with an API key, or set \
             WEBHOOK_SECRET",
            Some("callback_url"),
        ));
    }
    Ok(Some(Callback {
        url,
        key_id: caller.key_id.clone(),
    }))
}

/// Attempts every due delivery (at most `DUE_PER_RUN`, side by side); answers how many were
/// delivered.
pub async fn deliver_due(state: &AppState) -> worker::Result<usize> {
    let now = now_ms();
    let due = state
        .store
        .claim_due(now, now + 2 * TIMEOUT_MS as i64)
        .await?;
    let outcomes =
        futures_util::future::join_all(due.iter().map(|d| attempt(state, d, false))).await;
    let mut delivered = 0;
    for o in outcomes {
        match o {
            Ok(Next::Delivered) => delivered += 1,
            Ok(_) => {}
            Err(e) => worker::console_error!("webhook delivery failed to record: {e}"),
        }
    }
    Ok(delivered)
}

/// An admin's re-send of a job's delivery: the same `webhook-id` and body, signed anew.
pub async fn resend(state: &AppState, job_id: &str) -> Result<Next, crate::error::AppError> {
    let d = state
        .store
        .delivery_of(job_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("job {job_id} has no webhook")))?;
    Ok(attempt(state, &d, true).await?)
}

/// One attempt: the body (the job's final view, fixed at the first attempt), signed with the
/// attempt's timestamp, posted with a timeout, and recorded with what follows.
async fn attempt(state: &AppState, d: &Due, resend: bool) -> worker::Result<Next> {
    let body = match &d.body {
        Some(b) => b.clone(),
        None => payload(state, &d.job_id).await?,
    };
    let secret = d
        .secret
        .clone()
        .or_else(|| state.config.webhook_secret.clone())
        .unwrap_or_default();
    let key = secret_key(&secret).unwrap_or_default();
    let started = now_ms();
    let timestamp = started / 1000;
    let sig = signature(&key, &d.id, timestamp, &body);
    let answered = post(&state.meter, &d.url, &d.id, timestamp, &sig, &body).await;
    let ms = now_ms() - started;
    let (status, error) = match &answered {
        Ok(s) if (200..300).contains(s) => (Some(*s), None),
        Ok(s) => (Some(*s), Some(format!("the receiver answered {s}"))),
        Err(e) => (None, Some(e.clone())),
    };
    let n = d.attempts + 1;
    let next = after_attempt(status, n, state.config.timing.webhook_retry_base_s);
    let (state_name, next_at) = match next {
        Next::Delivered => ("delivered", None),
        Next::RetryIn { s } => ("pending", Some(now_ms() + s as i64 * 1000)),
        Next::GiveUp => ("failed", None),
    };
    let writes = state.store.attempted(&Attempted {
        id: &d.id,
        n,
        at: started,
        status,
        error: error.as_deref(),
        ms,
        resend,
        state: state_name,
        next_at,
        body: &body,
    })?;
    state.store.batch(writes).await?;
    worker::console_log!(
        "{}",
        serde_json::json!({
            "event": "webhook.attempt", "job_id": d.job_id, "webhook_id": d.id, "attempt": n,
            "status": status, "outcome": state_name, "ms": ms, "error": error, "resend": resend,
        })
    );
    Ok(next)
}

/// The payload: `{"type":"job.ended","timestamp":…,"data":<the job's view>}`, as the
/// specification recommends (a type, a timestamp, the data).
async fn payload(state: &AppState, job_id: &str) -> worker::Result<String> {
    let now = now_ms();
    let rows = state.store.jobs(&[job_id.to_owned()]).await?;
    let view = rows.first().map(|r| r.job_view(now));
    serde_json::to_string(&pipeline::dto::WebhookEvent {
        kind: pipeline::dto::WebhookEvent::JOB_ENDED.to_owned(),
        timestamp: pipeline::clock::format_rfc3339(now),
        data: view,
    })
    .map_err(|e| worker::Error::RustError(e.to_string()))
}

/// POSTs one signed attempt; answers the receiver's status, or why there was none.
async fn post(
    meter: &crate::meter::Meter,
    url: &str,
    id: &str,
    timestamp: i64,
    sig: &str,
    body: &str,
) -> Result<u16, String> {
    let send = async {
        let slot = meter.connect().await?;
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        headers.set("webhook-id", id)?;
        headers.set("webhook-timestamp", &timestamp.to_string())?;
        headers.set("webhook-signature", sig)?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(wasm_bindgen::JsValue::from_str(body)));
        let controller = AbortController::default();
        let signal = controller.signal();
        let request = Request::new_with_init(url, &init)?;
        let fetch = Fetch::Request(request);
        let exchange = fetch.send_with_signal(&signal);
        let timer = Delay::from(std::time::Duration::from_millis(TIMEOUT_MS));
        futures_util::pin_mut!(exchange);
        futures_util::pin_mut!(timer);
        match futures_util::future::select(exchange, timer).await {
            futures_util::future::Either::Left((resp, _)) => {
                drop(slot);
                let resp = resp?;
                crate::anthropic::discard_body(&resp);
                Ok(Some(resp.status_code()))
            }
            futures_util::future::Either::Right(_) => {
                controller.abort();
                Ok::<_, worker::Error>(None)
            }
        }
    };
    match send.await {
        Ok(Some(status)) => Ok(status),
        Ok(None) => Err(format!("no answer within {TIMEOUT_MS} ms")),
        Err(e) => Err(format!("not delivered: {e}")),
    }
}
