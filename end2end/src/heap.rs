//! The Worker isolate's memory, read the way production's 128 MB limit sees it: V8's own
//! figures through the runtime's inspector (`wrangler dev --inspector-port`, Chrome DevTools
//! Protocol), `Runtime.getHeapUsage` — the JS heap, and the backing store of every ArrayBuffer
//! (every body in flight among them).
//!
//! [`Inspector`] reads it once, and can ask for a full garbage collection first (what is left
//! then is what the isolate holds, not what it has yet to collect); [`HeapWatch`] borrows the
//! session to sample every 200 ms in the background — some samples after a collection, when
//! asked — keeps the peaks, and gives the session back. One session at a time: wrangler's
//! inspector proxy closes a second client (1013).
//!
//! The backing stores do not include the Worker's wasm memory (an idle isolate whose wasm
//! memory is 61.8 MiB reports 0.3 MiB of them): a caller adds it, from the Worker's own figures.
//!
//! workerd's inspector never answers `HeapProfiler.collectGarbage` (seen 2026-12-06 on wrangler
//! 4.164, through its inspector proxy; every other call is answered), which
//! is what left a session "connected and never answered" on 2026-12-05. A heap snapshot
//! (`HeapProfiler.takeHeapSnapshot`) starts with a full collection and is answered, so
//! [`Inspector::heap_kept`] takes one (its chunks arrive as events and are dropped). Every call
//! waits at most [`ANSWER_WITHIN`]: a silent inspector fails the test, it does not hang it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// The longest an inspector call may go unanswered (a heap snapshot of a busy isolate included).
pub const ANSWER_WITHIN: Duration = Duration::from_secs(120);

/// One MiB.
pub const MIB: u64 = 1024 * 1024;

/// `Runtime.getHeapUsage`'s answer, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeapUsage {
    /// Live objects on the JS heap.
    pub used: u64,
    /// The JS heap as allocated (live and not yet collected).
    pub total: u64,
    /// ArrayBuffers' backing stores: request and response bodies (not the wasm linear memory:
    /// 0.3 MiB on an idle Rust Worker whose wasm memory was 61.8 MiB, 2026-12-06).
    pub backing: u64,
}

impl HeapUsage {
    /// What the isolate holds: its JS heap as allocated plus every backing store.
    pub fn isolate(&self) -> u64 {
        self.total + self.backing
    }

    fn from_answer(result: &Value) -> Option<HeapUsage> {
        let field = |k: &str| result.get(k).and_then(Value::as_f64).map(|v| v as u64);
        Some(HeapUsage {
            used: field("usedSize")?,
            total: field("totalSize")?,
            // Older V8s do not report it; then the backing stores are unknown, not zero.
            backing: field("backingStorageSize").unwrap_or(0),
        })
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A DevTools Protocol session with the Worker's isolate.
pub struct Inspector {
    socket: Socket,
    next_id: u64,
}

type Error = Box<dyn std::error::Error + Send + Sync>;

impl Inspector {
    /// Connects to the first target the inspector on `port` lists (the Worker: a stack of one
    /// cell runs one).
    pub async fn connect(port: u16) -> Result<Inspector, Error> {
        let targets: Vec<Value> = reqwest::get(format!("http://127.0.0.1:{port}/json"))
            .await?
            .json()
            .await?;
        let url = targets
            .iter()
            .find_map(|t| t["webSocketDebuggerUrl"].as_str())
            .ok_or_else(|| format!("the inspector on {port} lists no target: {targets:?}"))?;
        let (socket, _) = tokio_tungstenite::connect_async(url).await?;
        let mut inspector = Inspector { socket, next_id: 1 };
        inspector.call("Runtime.enable").await?;
        inspector.call("HeapProfiler.enable").await?;
        Ok(inspector)
    }

    /// Sends `method` and waits for its answer (events and other answers are skipped).
    async fn call(&mut self, method: &str) -> Result<Value, Error> {
        let id = self.next_id;
        self.next_id += 1;
        let ask = json!({"id": id, "method": method}).to_string();
        self.socket.send(Message::text(ask)).await?;
        let answer = async {
            while let Some(msg) = self.socket.next().await {
                let Message::Text(text) = msg? else { continue };
                let answer: Value = serde_json::from_str(&text)?;
                if answer["id"].as_u64() == Some(id) {
                    if let Some(e) = answer.get("error") {
                        return Err(format!("{method}: {e}").into());
                    }
                    return Ok(answer["result"].clone());
                }
            }
            Err(format!("the inspector closed before answering {method}").into())
        };
        tokio::time::timeout(ANSWER_WITHIN, answer)
            .await
            .map_err(|_| format!("the inspector did not answer {method} in {ANSWER_WITHIN:?}"))?
    }

    /// The isolate's heap now.
    pub async fn heap(&mut self) -> Result<HeapUsage, Error> {
        let result = self.call("Runtime.getHeapUsage").await?;
        HeapUsage::from_answer(&result)
            .ok_or_else(|| format!("Runtime.getHeapUsage answered {result}").into())
    }

    /// The isolate's heap after a full garbage collection: what it keeps. The collection is
    /// a heap snapshot's (workerd answers no `HeapProfiler.collectGarbage`).
    pub async fn heap_kept(&mut self) -> Result<HeapUsage, Error> {
        self.call("HeapProfiler.takeHeapSnapshot").await?;
        self.heap().await
    }
}

/// Samples the isolate's heap every 200 ms with a borrowed [`Inspector`] until
/// [`HeapWatch::stop`], which gives the session back with what it saw. With `collect_every`
/// (n), every n-th sample is taken after a full collection: the live memory, which is what the
/// isolate must hold — the other samples count ArrayBuffers V8 has not collected yet.
pub struct HeapWatch {
    seen: Arc<Mutex<Seen>>,
    stop: Arc<tokio::sync::Notify>,
    task: tokio::task::JoinHandle<Inspector>,
}

/// What a [`HeapWatch`] saw.
#[derive(Debug, Clone, Copy, Default)]
pub struct Seen {
    /// The highest sample.
    pub peak: HeapUsage,
    /// The highest sample taken after a collection (zero without `collect_every`).
    pub live_peak: HeapUsage,
    pub samples: u64,
    pub collections: u64,
}

/// How often [`HeapWatch`] samples.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(200);

impl HeapWatch {
    pub async fn start(
        mut inspector: Inspector,
        collect_every: Option<u64>,
    ) -> Result<HeapWatch, Error> {
        let first = inspector.heap().await?;
        let seen = Arc::new(Mutex::new(Seen {
            peak: first,
            samples: 1,
            ..Seen::default()
        }));
        let stop = Arc::new(tokio::sync::Notify::new());
        let (shared, stopped) = (seen.clone(), stop.clone());
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(SAMPLE_EVERY);
            let mut n = 0u64;
            loop {
                tokio::select! {
                    _ = stopped.notified() => return inspector,
                    _ = tick.tick() => {}
                }
                n += 1;
                let collect = collect_every.is_some_and(|every| n.is_multiple_of(every.max(1)));
                // A sample the busy isolate answers late is late, not lost; a failed one (the
                // runtime restarted) is skipped.
                let sample = if collect {
                    inspector.heap_kept().await
                } else {
                    inspector.heap().await
                };
                let Ok(now) = sample else {
                    continue;
                };
                let mut s = shared.lock().unwrap();
                s.samples += 1;
                if now.isolate() > s.peak.isolate() {
                    s.peak = now;
                }
                if collect {
                    s.collections += 1;
                    if now.isolate() > s.live_peak.isolate() {
                        s.live_peak = now;
                    }
                }
            }
        });
        Ok(HeapWatch { seen, stop, task })
    }

    /// What it saw so far.
    pub fn seen(&self) -> Seen {
        *self.seen.lock().unwrap()
    }

    /// Stops sampling: the session back, and what it saw.
    pub async fn stop(self) -> (Inspector, Seen) {
        self.stop.notify_one();
        let inspector = self.task.await.expect("the heap sampler");
        (inspector, *self.seen.lock().unwrap())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_with_backing_stores_counts_them() {
        let h = HeapUsage::from_answer(&json!({
            "usedSize": 10.0, "totalSize": 20.0, "embedderHeapUsedSize": 0.0,
            "backingStorageSize": 5.0
        }))
        .unwrap();
        assert_eq!(h.isolate(), 25);
        assert_eq!(
            HeapUsage::from_answer(&json!({"usedSize": 1.0, "totalSize": 2.0}))
                .unwrap()
                .backing,
            0
        );
        assert_eq!(HeapUsage::from_answer(&json!({"usedSize": 1.0})), None);
    }
}
