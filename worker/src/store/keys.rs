//! API keys: stored as their SHA-256, never as the key.

use pipeline::dto::KeyView;
use pipeline::identity::{KeyHash, Role};
use serde::Deserialize;

use super::{num, Store};

#[derive(Deserialize)]
struct KeyRow {
    id: String,
    user_id: String,
    role: Role,
    created_at: i64,
    revoked_at: Option<i64>,
}

impl KeyRow {
    fn view(self) -> KeyView {
        KeyView {
            id: self.id,
            user_id: self.user_id,
            role: self.role,
            created_at: self.created_at,
            revoked_at: self.revoked_at,
        }
    }
}

/// Who a live key belongs to.
#[derive(Deserialize)]
pub struct KeyOwner {
    pub id: String,
    pub user_id: String,
    pub role: Role,
    #[serde(default)]
    pub callback_url: Option<String>,
}

/// A key to store.
pub struct NewKey<'a> {
    pub id: &'a str,
    pub hash: &'a KeyHash,
    pub user_id: &'a str,
    pub role: Role,
    pub webhook_secret: &'a str,
    pub callback_url: Option<&'a str>,
    pub now: i64,
}

impl Store {
    pub async fn insert_key(&self, k: &NewKey<'_>) -> worker::Result<()> {
        self.run(
            "INSERT INTO api_keys (id, key_hash, user_id, role, created_at, webhook_secret, \
             callback_url) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &[
                k.id.into(),
                k.hash.as_str().into(),
                k.user_id.into(),
                k.role.as_str().into(),
                num(k.now),
                k.webhook_secret.into(),
                super::opt(k.callback_url),
            ],
        )
        .await?;
        Ok(())
    }

    /// The keys, newest first (at most 500).
    pub async fn list_keys(&self) -> worker::Result<Vec<KeyView>> {
        let rows: Vec<KeyRow> = self
            .all(
                "SELECT id, user_id, role, created_at, revoked_at FROM api_keys \
                 ORDER BY created_at DESC LIMIT 500",
                &[],
            )
            .await?;
        Ok(rows.into_iter().map(KeyRow::view).collect())
    }

    /// Revokes a key (once); answers it as it is now, if it exists.
    pub async fn revoke_key(&self, id: &str, now: i64) -> worker::Result<Option<KeyView>> {
        self.run(
            "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
            &[id.into(), num(now)],
        )
        .await?;
        let row: Option<KeyRow> = self
            .first(
                "SELECT id, user_id, role, created_at, revoked_at FROM api_keys WHERE id = ?1",
                &[id.into()],
            )
            .await?;
        Ok(row.map(KeyRow::view))
    }

    /// The owner of a live (not revoked) key.
    pub async fn key_owner(&self, hash: &KeyHash) -> worker::Result<Option<KeyOwner>> {
        self.first(
            "SELECT id, user_id, role, callback_url FROM api_keys \
             WHERE key_hash = ?1 AND revoked_at IS NULL",
            &[hash.as_str().into()],
        )
        .await
    }
}
