//! What goes wrong with a call: prompt markers first (deterministic), then the configured random
//! rates, drawn from a seeded RNG so that a run can be repeated.

use std::collections::HashMap;

use crate::config::Knobs;
use crate::markers::Marker;

/// The fate of one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    None,
    /// Answer this error status.
    Status(u16),
    /// Never answer (within `hang_ms`).
    Hang,
    /// Answer normally after this many milliseconds.
    Slow(u64),
}

/// SplitMix64: tiny, fast, and good enough to spread faults; seeded for repeatable runs.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// How many times each `xK` marker has fired, keyed by (prompt hash, marker).
pub type Counters = HashMap<(u64, String), u32>;

/// Decides a call's fault from its markers (for `model`, prompt hash `prompt`), else from the
/// random rates (when `random` is set: the Messages API, not batch requests).
pub fn decide(
    markers: &[Marker],
    model: &str,
    prompt: u64,
    counters: &mut Counters,
    knobs: &Knobs,
    rng: &mut Rng,
    random: bool,
) -> Fault {
    for m in markers {
        match m {
            Marker::Hang => return Fault::Hang,
            Marker::Slow { ms } => return Fault::Slow(*ms),
            // Shapes of the answer, not faults: the output decides them.
            Marker::Refuse { .. }
            | Marker::Decline { .. }
            | Marker::Think { .. }
            | Marker::Block { .. }
            | Marker::Stop { .. }
            | Marker::Undecodable => {}
            Marker::Status {
                status,
                first,
                model: only,
            } => {
                // `@MODEL` names an id or an alias; `model` is the id the request resolved to.
                let named = |only: &str| {
                    only == model || crate::models::lookup(only).is_some_and(|m| m.id == model)
                };
                if only.as_deref().is_some_and(|only| !named(only)) {
                    continue;
                }
                match first {
                    None => return Fault::Status(*status),
                    Some(k) => {
                        let seen = counters.entry((prompt, format!("{m:?}"))).or_insert(0);
                        if *seen < *k {
                            *seen += 1;
                            return Fault::Status(*status);
                        }
                    }
                }
            }
        }
    }
    if !random {
        return Fault::None;
    }
    // One draw per call, so the sequence of faults depends only on the seed and call order.
    let x = rng.unit();
    let mut acc = 0.0;
    for (status, rate) in &knobs.error_rates {
        acc += rate;
        if x < acc {
            return Fault::Status(*status);
        }
    }
    if x < acc + knobs.hang_rate {
        return Fault::Hang;
    }
    Fault::None
}

/// The fate of one call of a Message Batches endpoint when `batch_faults` is on: the random
/// rates, where a draw of a 4xx other than 429 counts as no fault.
pub fn endpoint_fault(knobs: &Knobs, rng: &mut Rng) -> Fault {
    if !knobs.batch_faults {
        return Fault::None;
    }
    match decide(&[], "", 0, &mut Counters::new(), knobs, rng, true) {
        Fault::Status(s) if s < 500 && s != 429 => Fault::None,
        f => f,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::find;

    fn run(prompt: &str, model: &str, counters: &mut Counters) -> Fault {
        decide(
            &find(prompt),
            model,
            7,
            counters,
            &Knobs::default(),
            &mut Rng::new(1),
            true,
        )
    }

    #[test]
    fn a_status_marker_fails_every_call() {
        let mut c = Counters::new();
        for _ in 0..3 {
            assert_eq!(run("[[sim:529]]", "m", &mut c), Fault::Status(529));
        }
    }

    #[test]
    fn an_xk_marker_fails_the_first_k_calls_then_succeeds() {
        let mut c = Counters::new();
        let got: Vec<_> = (0..4).map(|_| run("[[sim:500x2]]", "m", &mut c)).collect();
        assert_eq!(
            got,
            [
                Fault::Status(500),
                Fault::Status(500),
                Fault::None,
                Fault::None
            ]
        );
    }

    #[test]
    fn a_model_marker_fails_only_that_model() {
        let mut c = Counters::new();
        assert_eq!(run("[[sim:400@a]]", "a", &mut c), Fault::Status(400));
        assert_eq!(run("[[sim:400@a]]", "b", &mut c), Fault::None);
    }

    #[test]
    fn hang_and_slow_markers_are_honoured() {
        let mut c = Counters::new();
        assert_eq!(run("[[sim:hang]]", "m", &mut c), Fault::Hang);
        assert_eq!(run("[[sim:slow=40]]", "m", &mut c), Fault::Slow(40));
    }

    #[test]
    fn random_rates_match_their_configuration_and_the_seed_repeats_them() {
        let knobs = Knobs {
            error_rates: [(529, 0.1), (500, 0.05)].into_iter().collect(),
            hang_rate: 0.02,
            ..Knobs::default()
        };
        let draw = |seed| {
            let mut rng = Rng::new(seed);
            let mut c = Counters::new();
            (0..20_000)
                .map(|_| decide(&[], "m", 0, &mut c, &knobs, &mut rng, true))
                .collect::<Vec<_>>()
        };
        let a = draw(3);
        assert_eq!(a, draw(3));
        let share = |f: Fault| a.iter().filter(|x| **x == f).count() as f64 / a.len() as f64;
        assert!((share(Fault::Status(529)) - 0.1).abs() < 0.01);
        assert!((share(Fault::Status(500)) - 0.05).abs() < 0.01);
        assert!((share(Fault::Hang) - 0.02).abs() < 0.005);
    }

    #[test]
    fn batch_requests_get_markers_but_no_random_faults() {
        let knobs = Knobs {
            error_rates: [(529, 1.0)].into_iter().collect(),
            ..Knobs::default()
        };
        let mut c = Counters::new();
        let mut rng = Rng::new(0);
        assert_eq!(
            decide(&[], "m", 0, &mut c, &knobs, &mut rng, false),
            Fault::None
        );
    }

    #[test]
    fn batch_endpoints_get_transient_faults_only_when_asked() {
        let knobs = Knobs {
            error_rates: [(529, 0.2), (400, 0.3)].into(),
            hang_rate: 0.1,
            ..Knobs::default()
        };
        let mut rng = Rng::new(3);
        assert!((0..200).all(|_| endpoint_fault(&knobs, &mut rng) == Fault::None));
        let knobs = Knobs {
            batch_faults: true,
            ..knobs
        };
        let draws: Vec<Fault> = (0..10_000)
            .map(|_| endpoint_fault(&knobs, &mut rng))
            .collect();
        let share = |f: &Fault| draws.iter().filter(|d| *d == f).count() as f64 / 1e4;
        assert!((share(&Fault::Status(529)) - 0.2).abs() < 0.02);
        assert!((share(&Fault::Hang) - 0.1).abs() < 0.02);
        assert_eq!(
            share(&Fault::Status(400)),
            0.0,
            "no random 400 on a valid call"
        );
    }
}
