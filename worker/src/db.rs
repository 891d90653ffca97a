//! Small D1 helpers shared by the entry points.

use wasm_bindgen::JsValue;
use worker::D1Database;

/// Records that a background path (`cron`, `queue_high`, …) ran at `at`.
pub async fn beat(db: &D1Database, name: &str, at: i64, detail: &str) -> worker::Result<()> {
    db.prepare(
        "INSERT INTO heartbeats (name, at, detail) VALUES (?1, ?2, ?3) \
         ON CONFLICT(name) DO UPDATE SET at = excluded.at, detail = excluded.detail",
    )
    .bind(&[name.into(), JsValue::from_f64(at as f64), detail.into()])?
    .run()
    .await?;
    Ok(())
}

/// A background path's last heartbeat: when it ran and what it noted.
#[derive(Debug, serde::Deserialize)]
pub struct Beat {
    pub at: f64,
    pub detail: Option<String>,
}

/// When a background path last ran, if ever.
pub async fn last_beat(db: &D1Database, name: &str) -> worker::Result<Option<Beat>> {
    db.prepare("SELECT at, detail FROM heartbeats WHERE name = ?1")
        .bind(&[name.into()])?
        .first(None)
        .await
}

/// Adds one to a named counter (stored as a heartbeat whose detail is the count).
pub async fn count(db: &D1Database, name: &str, at: i64) -> worker::Result<()> {
    db.prepare(
        "INSERT INTO heartbeats (name, at, detail) VALUES (?1, ?2, '1') \
         ON CONFLICT(name) DO UPDATE SET at = excluded.at, \
         detail = CAST(CAST(detail AS INTEGER) + 1 AS TEXT)",
    )
    .bind(&[name.into(), JsValue::from_f64(at as f64)])?
    .run()
    .await?;
    Ok(())
}
