//! The one identity extractor. Handlers take a [`Caller`]; none of them reads auth headers.

use std::future::Future;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use pipeline::error::ApiError;
use pipeline::identity::{decide, Identity, IdentityDecision, KeyHash, UserId};
use worker::send::SendFuture;

use crate::error::AppError;
use crate::services::AppState;
use crate::store::Store;

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
        let store = state.store.clone();
        // D1 futures are !Send; the Workers runtime is single-threaded, so this is sound.
        SendFuture::new(async move {
            match decide(mode, authorization.as_deref(), x_user_id.as_deref()) {
                IdentityDecision::Resolved(id) => Ok(Caller(id)),
                IdentityDecision::Reject(e) => Err(e.into()),
                IdentityDecision::LookUpKey(hash) => look_up(&store, &hash).await.map(Caller),
            }
        })
    }
}

async fn look_up(store: &Store, hash: &KeyHash) -> Result<Identity, AppError> {
    let owner = store
        .key_owner(hash)
        .await?
        .ok_or_else(|| ApiError::unauthorized("unknown or revoked API key"))?;
    let user_id = UserId::parse(&owner.user_id)
        .map_err(|e| ApiError::internal(format!("stored user id is invalid: {e}")))?;
    Ok(Identity {
        user_id,
        role: owner.role,
        key_id: Some(owner.id),
        callback_url: owner.callback_url,
    })
}
