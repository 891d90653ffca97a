//! At an invocation's end, the peaks it raised are recorded (`pipeline::envelope::headroom`):
//! each isolate remembers what it already recorded per entry point, so a warm isolate's ordinary
//! invocation makes no write. The write itself is not in the peak it records.

use std::cell::RefCell;
use std::collections::HashMap;

use pipeline::envelope::headroom::{raised, Known};
use pipeline::envelope::{Entry, Used};

use crate::config::now_ms;
use crate::services::AppState;

thread_local! {
    /// What this isolate recorded, per entry point (one isolate runs one thread).
    static KNOWN: RefCell<HashMap<Entry, Known>> = RefCell::new(HashMap::new());
}

/// Records what the invocation metered by `state` raised; a failed write is logged, not retried
/// (the next invocation that passes the peak records it).
pub async fn record(state: &AppState) {
    let meter = &state.meter;
    let (entry, now, at) = (meter.entry(), meter.envelope(), now_ms());
    let peaks = KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        let known = k
            .get(&entry)
            .copied()
            .unwrap_or(Known {
                used: Used::default(),
                since_ms: at,
            })
            .at(at);
        k.insert(entry, known.with(&now));
        raised(entry, &meter.limits(), &known.used, &now, at)
    });
    if peaks.is_empty() {
        return;
    }
    if let Err(e) = state.store.record_peaks(&peaks).await {
        worker::console_error!("headroom: the peaks were not recorded: {e}");
    }
}
