//! The one identity extractor. Handlers take a [`Caller`]; none of them reads auth headers.

use std::future::Future;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use pipeline::error::ApiError;
use pipeline::identity::{decide, Identity, IdentityDecision, KeyHash, Role, UserId};
use worker::send::SendFuture;

use crate::config::DB;
use crate::error::AppError;
use crate::routes::AppState;

/// The resolved caller of a request.
#[derive(Debug, Clone)]
pub struct Caller(pub Identity);

impl FromRequestParts<AppState> for Caller {
    type Rejection = AppError;

    fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> impl Future<Output = Result<Self, Self::Rejection>> + Send {
        // A header that is not visible ASCII cannot be a key or a user id: treat it as malformed.
        let header = |name: &str| {
            parts.headers.get(name).map(|v| {
                v.to_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|_| "\u{0}".into())
            })
        };
        let authorization = header("authorization");
        let x_user_id = header("x-user-id");
        let mode = state.config.auth_mode;
        let env = state.env.clone();
        // D1 futures are !Send; the Workers runtime is single-threaded, so this is sound.
        SendFuture::new(async move {
            match decide(mode, authorization.as_deref(), x_user_id.as_deref()) {
                IdentityDecision::Resolved(id) => Ok(Caller(id)),
                IdentityDecision::Reject(e) => Err(e.into()),
                IdentityDecision::LookUpKey(hash) => look_up(&env, &hash).await.map(Caller),
            }
        })
    }
}

async fn look_up(env: &worker::Env, hash: &KeyHash) -> Result<Identity, AppError> {
    #[derive(serde::Deserialize)]
    struct Row {
        user_id: String,
        role: String,
    }
    let row: Option<Row> = env
        .d1(DB)?
        .prepare("SELECT user_id, role FROM api_keys WHERE key_hash = ?1 AND revoked_at IS NULL")
        .bind(&[hash.as_str().into()])?
        .first(None)
        .await?;
    let row = row.ok_or_else(|| ApiError::unauthorized("unknown or revoked API key"))?;
    let user_id = UserId::parse(&row.user_id)
        .map_err(|e| ApiError::internal(format!("stored user id is invalid: {e}")))?;
    let role = Role::parse(&row.role).unwrap_or(Role::User);
    Ok(Identity { user_id, role })
}
