//! The simulator's one clock read.

use std::time::{SystemTime, UNIX_EPOCH};

/// Wall-clock epoch milliseconds; the only clock read of the simulator.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}
