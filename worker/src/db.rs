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

/// When a background path last ran, if ever.
pub async fn last_beat(db: &D1Database, name: &str) -> worker::Result<Option<i64>> {
    let at: Option<f64> = db
        .prepare("SELECT at FROM heartbeats WHERE name = ?1")
        .bind(&[name.into()])?
        .first(Some("at"))
        .await?;
    Ok(at.map(|v| v as i64))
}
