use leptos::prelude::*;

/// A signal that changes every second while the calling component lives: resources that track
/// it refetch, so lists and elapsed times stay live.
pub fn every_second() -> RwSignal<u32> {
    let tick = RwSignal::new(0u32);
    if let Ok(handle) = set_interval_with_handle(
        move || tick.update(|t| *t = t.wrapping_add(1)),
        std::time::Duration::from_secs(1),
    ) {
        on_cleanup(move || handle.clear());
    }
    tick
}
