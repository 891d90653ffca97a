use std::time::Duration;

use leptos::prelude::*;

/// A signal that changes every second while the calling component lives: resources that track
/// it refetch, so lists and elapsed times stay live.
pub fn every_second() -> RwSignal<u32> {
    every(Duration::from_secs(1))
}

/// A signal that changes every `period` while the calling component lives; the interval is
/// cleared when the component unmounts, so a page left behind stops polling.
pub fn every(period: Duration) -> RwSignal<u32> {
    let tick = RwSignal::new(0u32);
    // A shell rendered at build time has no clock to tick.
    #[cfg(not(feature = "ssr"))]
    if let Ok(handle) =
        set_interval_with_handle(move || tick.update(|t| *t = t.wrapping_add(1)), period)
    {
        on_cleanup(move || handle.clear());
    }
    #[cfg(feature = "ssr")]
    let _ = period;
    tick
}
