//! Messages calls on the routes besides the Anthropic API (issue 36): Amazon Bedrock's
//! `InvokeModel`, signed with AWS Signature Version 4, and Vertex AI's `rawPredict`, with an
//! OAuth access token. What each route wants — the id, the path, the body, what its errors mean
//! — is `pipeline::provider`; this module only signs, sends and reads, through the same client
//! (its timeout, its connection slots, its subrequest count) as the Anthropic API's calls.

use pipeline::anthropic::{inline, MessagesRequest};
use pipeline::models::Model;
use pipeline::outcome::CallOutcome;
use pipeline::provider::{self, Endpoint, Route};
use pipeline::sigv4;
use pipeline::status::Kind;
use wasm_bindgen::{JsCast, JsValue};
use worker::{Headers, Method, Request, RequestInit};

use crate::anthropic::{decode_answer, Answered, Raw};
use crate::services::AppState;
use crate::store::JobRow;

/// The header that tells the simulator which job a call bills (unsigned, harmless elsewhere).
const JOB_HEADER: &str = "x-job-id";

/// One Messages call of a job on `route` (not the Anthropic API's), its answer read as the
/// Anthropic API's would be.
pub async fn messages_on(
    state: &AppState,
    route: &Route,
    row: &JobRow,
    request: &MessagesRequest,
) -> Answered {
    let Some(model) = pipeline::models::find(&request.model) else {
        return failed(CallOutcome::Network(format!(
            "{} is not in the catalog: no id for {}",
            request.model,
            route.provider().display_name()
        )));
    };
    match send(state, route, model, row, request).await {
        Ok(raw) => read(route, model, raw),
        Err(e) => failed(e),
    }
}

fn failed(e: CallOutcome) -> Answered {
    Answered {
        result: Err(e),
        reported: Vec::new(),
    }
}

/// The answer: a Message named by the catalog's id, or the provider's error read into an
/// outcome.
fn read(route: &Route, model: &Model, raw: Raw) -> Answered {
    let reported = raw.reported.clone();
    if (200..300).contains(&raw.status) {
        let result = decode_answer(raw).map(|m| provider::as_catalog_model(m, model));
        return Answered { result, reported };
    }
    if route.provider() == pipeline::provider::Provider::Vertex && raw.status == 401 {
        crate::google_auth::forget();
    }
    let header = |name: &str| match name {
        "x-amzn-errortype" => raw.error_type.clone(),
        "retry-after" => raw.retry_after_s.map(|s| s.to_string()),
        _ => None,
    };
    Answered {
        result: Err(provider::failure(
            route.provider(),
            raw.status,
            &raw.text,
            header,
        )),
        reported,
    }
}

/// Builds, authorises and sends the call.
async fn send(
    state: &AppState,
    route: &Route,
    model: &Model,
    row: &JobRow,
    request: &MessagesRequest,
) -> Result<Raw, CallOutcome> {
    let net = |e: String| CallOutcome::Network(e);
    let model_id = route.model_id(model).ok_or_else(|| {
        net(format!(
            "{} does not serve {}",
            route.provider().display_name(),
            model.id
        ))
    })?;
    let request = inline_elsewhere(row, request);
    let json = serde_json::to_string(&request).map_err(|e| net(e.to_string()))?;
    let json = provider::body_for(route, &json).map_err(net)?;
    let body = crate::requests::body_of(state, row, json)
        .await
        .map_err(|e| net(format!("cannot read the request's PDF: {e}")))?;
    let path = route.messages_path(&model_id);
    let headers = Headers::new();
    let set = |k: &str, v: &str| headers.set(k, v).map_err(|e| net(e.to_string()));
    set("content-type", "application/json")?;
    set("accept", "application/json")?;
    set(JOB_HEADER, &row.id)?;
    let url = match &route.endpoint {
        Endpoint::Bedrock { region, .. } => {
            let signed = sign(state, route, region, &path, &body).await?;
            set("authorization", &signed.authorization)?;
            set("x-amz-date", &signed.amz_date)?;
            set("x-amz-content-sha256", &signed.content_sha256)?;
            if let Some(token) = &signed.security_token {
                set("x-amz-security-token", token)?;
            }
            format!("{}{}", route.base_url, sigv4::request_path(&path))
        }
        Endpoint::Vertex { .. } => {
            let token = crate::google_auth::token(state).await?;
            set("authorization", &format!("Bearer {token}"))?;
            // Project, location and model are plain names: the path goes as it is.
            format!("{}{path}", route.base_url)
        }
        Endpoint::Anthropic => return Err(net("the Anthropic API is not called here".into())),
    };
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(body));
    let request = Request::new_with_init(&url, &init).map_err(|e| net(e.to_string()))?;
    state.anthropic.exchange(request).await
}

/// A PDF job's request reads its PDF by `file_id` from the Anthropic API's Files API, which no
/// other route has: elsewhere the PDF goes inline, as base64 (put in as the body is sent).
fn inline_elsewhere(row: &JobRow, request: &MessagesRequest) -> MessagesRequest {
    let key = row.prompt_key.as_deref();
    match (row.kind, key) {
        (Kind::Pdf, Some(key)) if pipeline::anthropic::files::reads_a_file(request) => {
            pipeline::pdf::request(&request.model, row.template(), inline::reference(key))
        }
        _ => request.clone(),
    }
}

/// Signs a Bedrock call (SigV4, service `bedrock`): the body's hash is taken where the body
/// is — in the Worker for a JSON string, in JS memory for a Blob carrying a PDF.
async fn sign(
    state: &AppState,
    route: &Route,
    region: &str,
    path: &str,
    body: &JsValue,
) -> Result<sigv4::Signed, CallOutcome> {
    let creds =
        state.config.routes.aws.as_ref().ok_or_else(|| {
            CallOutcome::Network("the Bedrock route has no AWS credentials".into())
        })?;
    let hash = match body.as_string() {
        Some(text) => sigv4::Payload::Bytes(text.as_bytes()).sha256(),
        None => crate::webcrypto::blob_sha256(body.unchecked_ref())
            .await
            .map_err(|e| CallOutcome::Network(format!("cannot hash the request: {e:?}")))?,
    };
    let host = host_of(&route.base_url);
    let amz_date = sigv4::amz_date(crate::config::now_ms());
    let req = sigv4::Request {
        method: "POST",
        host,
        path,
        query: &[],
        headers: &[("content-type", "application/json")],
        payload: sigv4::Payload::Sha256(&hash),
    };
    let scope = sigv4::Scope {
        region,
        service: provider::BEDROCK_SERVICE,
        amz_date: &amz_date,
    };
    Ok(sigv4::sign(&req, creds, &scope))
}

/// `https://host[:port]/…` → `host[:port]`, the `Host` header the request goes with.
fn host_of(base_url: &str) -> &str {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest)
}
