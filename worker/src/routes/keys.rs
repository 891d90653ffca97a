//! API keys (admins): `POST /api/keys` issues a key (shown once, stored as its SHA-256),
//! `GET /api/keys` lists them, `DELETE /api/keys/:id` revokes one.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::dto::{KeyCreated, KeyList};
use pipeline::error::ApiError;
use pipeline::identity::{new_key, parse_key_input, KeyHash};

use super::admission::json_body;
use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::random_bytes;
use crate::services::AppState;
use crate::store::keys::NewKey;

#[worker::send]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    caller.0.require_admin("manage API keys")?;
    json_body(&headers, &body, 4 * 1024)?;
    let (user, role) = parse_key_input(&body)?;
    let callback_url = match serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("callback_url").cloned())
    {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(u)) => Some(pipeline::webhooks::check_url(
            &u,
            state.config.webhook_loopback,
        )?),
        Some(_) => {
            return Err(ApiError::bad_request(
                "invalid_callback_url",
                "callback_url must be a string",
                Some("callback_url"),
            )
            .into())
        }
    };
    let mut seed = [0u8; 24];
    seed[..16].copy_from_slice(&random_bytes()?);
    seed[16..].copy_from_slice(&random_bytes()?[..8]);
    let webhook_secret = pipeline::webhooks::new_secret(&seed);
    let mut random = [0u8; 32];
    random[..16].copy_from_slice(&random_bytes()?);
    random[16..].copy_from_slice(&random_bytes()?);
    let key = new_key(&random);
    let id = format!("key_{}", crate::services::new_id()?);
    let now = now_ms();
    state
        .store
        .insert_key(&NewKey {
            id: &id,
            hash: &KeyHash::of(&key),
            user_id: user.as_str(),
            role,
            webhook_secret: &webhook_secret,
            callback_url: callback_url.as_deref(),
            now,
        })
        .await?;
    let created = KeyCreated {
        id,
        key,
        user_id: user.as_str().into(),
        role,
        created_at: now,
        webhook_secret,
        callback_url,
    };
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

#[worker::send]
pub async fn list(State(state): State<AppState>, caller: Caller) -> Result<Response, AppError> {
    caller.0.require_admin("manage API keys")?;
    Ok(Json(KeyList {
        items: state.store.list_keys().await?,
    })
    .into_response())
}

#[worker::send]
pub async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    caller.0.require_admin("manage API keys")?;
    let key = state
        .store
        .revoke_key(&id, now_ms())
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no API key {id}")))?;
    Ok(Json(key).into_response())
}
