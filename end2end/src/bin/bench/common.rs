//! What every benchmark shares: its runtime, an instant simulator, its arguments, and where its
//! table is written.

/// The multi-threaded runtime each benchmark drives its clients on.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A simulator that answers at once (what the pipeline adds is what is measured).
pub fn instant_sim() -> sim::Knobs {
    sim::Knobs {
        latency_ms: 0,
        latency_per_token_ms: 0.0,
        ..sim::Knobs::default()
    }
}

/// The number after `name` on the command line (`--jobs 200`), or `default`.
pub fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// `target/bench/<name>.md`.
pub fn write(name: &str, table: &str) {
    let dir = xtask::paths::target_dir().join("bench");
    std::fs::create_dir_all(&dir).expect("target/bench");
    let path = dir.join(format!("{name}.md"));
    std::fs::write(&path, table).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    eprintln!("written to {}", path.display());
}
