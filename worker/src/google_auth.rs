//! The Vertex AI route's bearer token: the fixed one configured, or one minted from the service
//! account's key (`pipeline::provider::google`) and kept by the isolate until five minutes before
//! it expires. A token endpoint that refuses the account answers as a 401 would: a configuration
//! error the route's breaker opens on.

use std::cell::RefCell;

use pipeline::outcome::CallOutcome;
use pipeline::provider::google::{token_request, ServiceAccount, TokenAnswer};
use wasm_bindgen::JsValue;
use worker::{Headers, Method, Request, RequestInit};

use crate::config::{now_ms, VertexAuth};
use crate::services::AppState;

thread_local! {
    /// The isolate's minted token and until when it is used.
    static MINTED: RefCell<Option<(String, i64)>> = const { RefCell::new(None) };
}

/// The token to send now.
pub async fn token(state: &AppState) -> Result<String, CallOutcome> {
    match &state.config.routes.vertex {
        Some(VertexAuth::Token(t)) => Ok(t.clone()),
        Some(VertexAuth::Account(sa)) => {
            let now = now_ms();
            let kept = MINTED.with(|m| m.borrow().clone());
            if let Some((token, _)) = kept.filter(|(_, until)| *until > now) {
                return Ok(token);
            }
            let answer = mint(state, sa).await?;
            let until = answer.use_until(now);
            MINTED.with(|m| *m.borrow_mut() = Some((answer.access_token.clone(), until)));
            Ok(answer.access_token)
        }
        None => Err(refused("the Vertex AI route has no credentials".into())),
    }
}

/// Forgets the minted token (Vertex AI refused it: the next call mints another).
pub fn forget() {
    MINTED.with(|m| *m.borrow_mut() = None);
}

/// A refusal of our credentials, as the route's answer would be.
fn refused(why: String) -> CallOutcome {
    CallOutcome::Http {
        status: 401,
        message: format!("Google Vertex AI UNAUTHENTICATED: {why}"),
        retry_after_s: None,
    }
}

/// Signs the account's JWT and exchanges it for a token.
async fn mint(state: &AppState, sa: &ServiceAccount) -> Result<TokenAnswer, CallOutcome> {
    let net = |e: worker::Error| CallOutcome::Network(e.to_string());
    let input = sa.signing_input(now_ms());
    let der = sa.key_der().map_err(refused)?;
    let signature = crate::webcrypto::rsa_sha256_sign(&der, input.as_bytes())
        .await
        .map_err(|e| refused(format!("the service account's key cannot sign: {e:?}")))?;
    let headers = Headers::new();
    headers
        .set("content-type", "application/x-www-form-urlencoded")
        .map_err(net)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(JsValue::from_str(&token_request(&input, &signature))));
    let request = Request::new_with_init(&sa.token_uri, &init).map_err(net)?;
    let raw = state.anthropic.exchange(request).await?;
    if !(200..300).contains(&raw.status) {
        if raw.status >= 500 {
            return Err(CallOutcome::Http {
                status: raw.status,
                message: format!("Google's token endpoint: {}", raw.text),
                retry_after_s: raw.retry_after_s,
            });
        }
        return Err(refused(format!(
            "the token endpoint refused the service account: {}",
            raw.text
        )));
    }
    serde_json::from_str(&raw.text)
        .map_err(|e| CallOutcome::Network(format!("unreadable token answer: {e}")))
}
