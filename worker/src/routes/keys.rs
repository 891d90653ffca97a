//! API keys (admins): `POST /api/keys` issues a key (shown once, stored as its SHA-256),
//! `GET /api/keys` lists them, `DELETE /api/keys/:id` revokes one.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::dto::{KeyCreated, KeyList, KeyView};
use pipeline::error::ApiError;
use pipeline::identity::{new_key, parse_key_input, KeyHash, Role};
use serde::Deserialize;
use wasm_bindgen::JsValue;

use crate::config::{now_ms, DB};
use crate::error::AppError;
use crate::identity::Caller;
use crate::queues::random_bytes;
use crate::routes::{json_body, AppState};

#[derive(Deserialize)]
struct Row {
    id: String,
    user_id: String,
    role: String,
    created_at: i64,
    revoked_at: Option<i64>,
}

impl Row {
    fn view(self) -> KeyView {
        KeyView {
            id: self.id,
            user_id: self.user_id,
            role: Role::parse(&self.role).unwrap_or(Role::User),
            created_at: self.created_at,
            revoked_at: self.revoked_at,
        }
    }
}

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
    let mut random = [0u8; 32];
    random[..16].copy_from_slice(&random_bytes()?);
    random[16..].copy_from_slice(&random_bytes()?);
    let key = new_key(&random);
    let id = format!("key_{}", pipeline::jobs::new_id(random_bytes()?));
    let now = now_ms();
    state
        .env
        .d1(DB)?
        .prepare(
            "INSERT INTO api_keys (id, key_hash, user_id, role, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(&[
            id.as_str().into(),
            KeyHash::of(&key).as_str().into(),
            user.as_str().into(),
            role.as_str().into(),
            JsValue::from_f64(now as f64),
        ])?
        .run()
        .await?;
    let created = KeyCreated {
        id,
        key,
        user_id: user.as_str().into(),
        role,
        created_at: now,
    };
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

#[worker::send]
pub async fn list(State(state): State<AppState>, caller: Caller) -> Result<Response, AppError> {
    caller.0.require_admin("manage API keys")?;
    let rows: Vec<Row> = state
        .env
        .d1(DB)?
        .prepare(
            "SELECT id, user_id, role, created_at, revoked_at FROM api_keys \
             ORDER BY created_at DESC LIMIT 500",
        )
        .all()
        .await?
        .results()?;
    Ok(Json(KeyList {
        items: rows.into_iter().map(Row::view).collect(),
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
    let db = state.env.d1(DB)?;
    db.prepare("UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL")
        .bind(&[id.as_str().into(), JsValue::from_f64(now_ms() as f64)])?
        .run()
        .await?;
    let row: Option<Row> = db
        .prepare("SELECT id, user_id, role, created_at, revoked_at FROM api_keys WHERE id = ?1")
        .bind(&[id.as_str().into()])?
        .first(None)
        .await?;
    let row = row.ok_or_else(|| ApiError::not_found(format!("no API key {id}")))?;
    Ok(Json(row.view()).into_response())
}
