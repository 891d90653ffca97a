//! Rate limits like the real API: requests, input tokens and output tokens per minute, each a
//! continuously refilling bucket (capacity = the per-minute limit, refilled at limit/60 s).

use pipeline::anthropic::RATE_LIMIT_FAMILIES;
use pipeline::clock::format_rfc3339;

use crate::config::Knobs;

/// One continuously refilling bucket.
#[derive(Debug, Clone)]
pub struct Bucket {
    pub capacity: f64,
    pub level: f64,
    pub updated_ms: i64,
}

impl Bucket {
    pub fn full(capacity: u32, now_ms: i64) -> Bucket {
        Bucket {
            capacity: capacity as f64,
            level: capacity as f64,
            updated_ms: now_ms,
        }
    }

    fn refill(&mut self, now_ms: i64) {
        let elapsed = (now_ms - self.updated_ms).max(0) as f64;
        self.level = (self.level + elapsed * self.capacity / 60_000.0).min(self.capacity);
        self.updated_ms = now_ms.max(self.updated_ms);
    }

    /// Milliseconds until `n` fits (0 if it fits now).
    fn wait_ms(&self, n: f64) -> i64 {
        if n <= self.level {
            0
        } else {
            ((n - self.level) * 60_000.0 / self.capacity).ceil() as i64
        }
    }

    /// Milliseconds until the bucket is full again: the `-reset` header.
    fn full_in_ms(&self) -> i64 {
        self.wait_ms(self.capacity)
    }
}

/// The three buckets of an organisation.
#[derive(Debug, Clone)]
pub struct Limits {
    pub requests: Bucket,
    pub input_tokens: Bucket,
    pub output_tokens: Bucket,
}

impl Limits {
    pub fn new(c: &Knobs, now_ms: i64) -> Limits {
        Limits {
            requests: Bucket::full(c.rpm, now_ms),
            input_tokens: Bucket::full(c.itpm, now_ms),
            output_tokens: Bucket::full(c.otpm, now_ms),
        }
    }

    fn buckets(&mut self) -> [&mut Bucket; 3] {
        [
            &mut self.requests,
            &mut self.input_tokens,
            &mut self.output_tokens,
        ]
    }

    /// Takes one request, `input` (uncached) input tokens and `output` output tokens if all three
    /// fit; otherwise takes nothing and answers the wait in milliseconds until they would.
    pub fn try_take(&mut self, input: u32, output: u32, now_ms: i64) -> Result<(), i64> {
        let want = [1.0, input as f64, output as f64];
        let mut wait = 0;
        for (b, n) in self.buckets().into_iter().zip(want) {
            b.refill(now_ms);
            // A request larger than the whole bucket can never fit; it waits a full minute, as
            // the real API's retry-after does, and is refused again.
            wait = wait.max(if n > b.capacity { 60_000 } else { b.wait_ms(n) });
        }
        if wait > 0 {
            return Err(wait);
        }
        for (b, n) in self.buckets().into_iter().zip(want) {
            b.level -= n;
        }
        Ok(())
    }

    /// Gives back output tokens reserved from `max_tokens` but not generated.
    pub fn refund_output(&mut self, n: u32, now_ms: i64) {
        let b = &mut self.output_tokens;
        b.refill(now_ms);
        b.level = (b.level + n as f64).min(b.capacity);
    }

    /// `anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}`.
    pub fn headers(&mut self, now_ms: i64) -> Vec<(String, String)> {
        let mut out = Vec::with_capacity(9);
        for (family, b) in RATE_LIMIT_FAMILIES.iter().zip(self.buckets()) {
            b.refill(now_ms);
            out.push((format!("{family}-limit"), format!("{}", b.capacity as u64)));
            out.push((
                format!("{family}-remaining"),
                format!("{}", b.level.max(0.0).floor() as u64),
            ));
            out.push((
                format!("{family}-reset"),
                format_rfc3339(now_ms + b.full_in_ms()),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(rpm: u32, itpm: u32, otpm: u32) -> Limits {
        Limits::new(
            &Knobs {
                rpm,
                itpm,
                otpm,
                ..Knobs::default()
            },
            0,
        )
    }

    #[test]
    fn requests_beyond_the_limit_wait_for_the_refill() {
        let mut l = limits(60, 1000, 1000);
        for _ in 0..60 {
            l.try_take(1, 1, 0).unwrap();
        }
        // One request refills every second at 60 rpm.
        assert_eq!(l.try_take(1, 1, 0), Err(1000));
        assert_eq!(l.try_take(1, 1, 1000), Ok(()));
    }

    #[test]
    fn a_refused_request_takes_nothing() {
        let mut l = limits(10, 100, 100);
        assert!(l.try_take(50, 200, 0).is_err());
        assert_eq!(l.requests.level, 10.0);
        assert_eq!(l.input_tokens.level, 100.0);
    }

    #[test]
    fn headers_report_limit_remaining_and_reset() {
        let mut l = limits(60, 1000, 1000);
        l.try_take(100, 10, 0).unwrap();
        let h = l.headers(0);
        let get = |k: &str| h.iter().find(|(n, _)| n == k).unwrap().1.clone();
        assert_eq!(get("anthropic-ratelimit-requests-limit"), "60");
        assert_eq!(get("anthropic-ratelimit-input-tokens-remaining"), "900");
        assert_eq!(
            get("anthropic-ratelimit-input-tokens-reset"),
            "1970-01-01T00:00:06Z"
        );
    }
}
