//! Simulator configuration. Everything is a command-line flag with an environment twin
//! (`--error-rate` ↔ `SIM_ERROR_RATE`, …); the knobs (not the port or the key) can also be changed
//! while running through `/_sim/config`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Fixed at start.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// When set, `x-api-key` must equal it; otherwise any non-empty key is accepted.
    pub api_key: Option<String>,
    pub knobs: Knobs,
    /// The identities the other routes accept (`crate::clouds`).
    pub clouds: CloudCredentials,
}

/// Who the Bedrock and Vertex AI routes let in: one AWS access key; one Google access token,
/// and the tokens the token endpoint mints for one service account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudCredentials {
    pub aws_access_key_id: String,
    pub aws_secret_access_key: String,
    pub vertex_token: String,
    pub service_account_email: String,
    /// PEM, PKCS #8: the public half checks the JWTs the token endpoint is sent.
    pub service_account_key: String,
}

/// The AWS key pair and the Vertex AI token the simulator accepts unless told otherwise (the
/// local stack's `.dev.vars` carries the same).
pub const SIM_AWS_ACCESS_KEY_ID: &str = "AKIDSIMULATOR00000000";
pub const SIM_AWS_SECRET_ACCESS_KEY: &str = "sim-aws-secret-access-key";
pub const SIM_VERTEX_TOKEN: &str = "ya29.sim-vertex-access-token";
/// The service account the simulator's token endpoint knows: a key made for the simulator
/// (`openssl genpkey -algorithm RSA`), which opens nothing anywhere else.
pub const SIM_SERVICE_ACCOUNT_EMAIL: &str = "pipeline@sim-project.iam.gserviceaccount.com";
pub const SIM_SERVICE_ACCOUNT_KEY: &str = include_str!("clouds/fixtures/service_account_key.pem");

/// The simulator's service account as a JSON key file, its `token_uri` at `base_url`.
pub fn sim_service_account_json(base_url: &str) -> String {
    serde_json::json!({
        "type": "service_account",
        "project_id": "sim-project",
        "private_key_id": "sim-key-1",
        "private_key": SIM_SERVICE_ACCOUNT_KEY,
        "client_email": SIM_SERVICE_ACCOUNT_EMAIL,
        "token_uri": format!("{base_url}/token"),
    })
    .to_string()
}

impl Default for CloudCredentials {
    fn default() -> Self {
        CloudCredentials {
            aws_access_key_id: SIM_AWS_ACCESS_KEY_ID.into(),
            aws_secret_access_key: SIM_AWS_SECRET_ACCESS_KEY.into(),
            vertex_token: SIM_VERTEX_TOKEN.into(),
            service_account_email: SIM_SERVICE_ACCOUNT_EMAIL.into(),
            service_account_key: SIM_SERVICE_ACCOUNT_KEY.into(),
        }
    }
}

/// The routes the outage knob names (`crate::clouds`).
pub const OUTAGE_ROUTES: [&str; 3] = ["anthropic", "bedrock", "vertex"];

/// A route taken down or slowed on purpose (`Knobs::outages`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Outage {
    /// Every call of the route answers this status (0: none) — in the route's own error shape.
    pub status: u16,
    /// Every answer of the route comes this much later.
    pub slow_ms: u64,
}

/// What `/_sim/config` shows and changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Knobs {
    /// Requests per minute.
    pub rpm: u32,
    /// Input tokens per minute (cache reads excluded, as with the real API).
    pub itpm: u32,
    /// Output tokens per minute.
    pub otpm: u32,
    /// Seed of the fault RNG: the same seed and calls give the same faults.
    pub seed: u64,
    /// Latency of every Messages answer: base…
    pub latency_ms: u64,
    /// …plus this much per output token.
    pub latency_per_token_ms: f64,
    /// Share of Messages calls that answer this status instead (e.g. 529 → 0.1).
    pub error_rates: BTreeMap<u16, f64>,
    /// Share of Messages calls that never answer (within `hang_ms`).
    pub hang_rate: f64,
    /// How long a hang lasts: longer than any client timeout.
    pub hang_ms: u64,
    /// Processing time of a Message Batch.
    pub batch_ms: u64,
    /// Share of JSON answers wrapped in ```json fences…
    pub fence_rate: f64,
    /// …and followed by a sentence of commentary, so that repair is exercised.
    pub commentary_rate: f64,
    /// `retry-after` of injected 429 and 529 answers, in seconds; 0 sends none (as the real
    /// API's spend-limit 429 does).
    pub retry_after_s: u64,
    /// Answer batch creates only after this long (the batch exists meanwhile): a client that
    /// times out does not know its batch was created.
    pub create_batch_delay_ms: u64,
    /// The random rates apply to the Message Batches API too: each call of its endpoints may
    /// answer 429/5xx or hang (4xx rates other than 429 are left out: a valid call is not refused
    /// at random; a hung create has made its batch), and each request inside a batch may end
    /// `errored` (with the drawn status's error type) or `expired` (a hang).
    pub batch_faults: bool,
    /// Bill one model at this many thousandths of its list price (`(model, permille)`): the
    /// provider's price moved and our table did not — what reconciliation must catch.
    pub misprice: Option<(String, u64)>,
    /// Whether the Files API exists here (off: its routes are 404 and a `file` document source
    /// is refused, as on a platform without it — what the base64 fallback is tested against).
    pub files_api: bool,
    /// The organization's storage for files, in bytes (`None`: the documented 1 TB).
    pub files_storage_bytes: Option<u64>,
    /// Models the API lists besides its table (`GET /v1/models` only: a release the pipeline's
    /// catalog does not know yet), newest first among the others by `created_at`.
    pub models_added: Vec<AddedModel>,
    /// Models of its table the API no longer offers: unlisted, and every call naming them a
    /// 404 `not_found_error`, as for a retired model.
    pub models_dropped: Vec<String>,
    /// Routes down or slow, by name (`anthropic`: every `/v1/…` endpoint; `bedrock`;
    /// `vertex`): what an outage suite turns on and off.
    pub outages: BTreeMap<String, Outage>,
    /// From this instant (epoch ms) the Vertex AI token is expired: every call with it is a 401
    /// `UNAUTHENTICATED` (`None`: it never expires).
    pub vertex_token_expires_at: Option<i64>,
    /// The AWS secret key Bedrock now holds for the access key (a rotation the caller has not
    /// heard of): every signature made with the old one no longer matches (`None`: the one
    /// the simulator started with).
    pub aws_secret_access_key: Option<String>,
}

/// A model listed by `GET /v1/models` that the simulator's table does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddedModel {
    pub id: String,
    pub display_name: String,
    /// RFC 3339.
    pub created_at: String,
    pub max_input_tokens: u64,
    pub max_tokens: u64,
}

impl Default for Knobs {
    /// Limits of a mid-tier organisation (the demo never sees a 429), no faults, batches that end
    /// in a few seconds, and a little untidy JSON.
    fn default() -> Self {
        Knobs {
            rpm: 4_000,
            itpm: 2_000_000,
            otpm: 400_000,
            seed: 42,
            latency_ms: 0,
            latency_per_token_ms: 0.0,
            error_rates: BTreeMap::new(),
            hang_rate: 0.0,
            hang_ms: 600_000,
            batch_ms: 3_000,
            fence_rate: 0.1,
            commentary_rate: 0.1,
            retry_after_s: 1,
            create_batch_delay_ms: 0,
            batch_faults: false,
            misprice: None,
            files_api: true,
            files_storage_bytes: None,
            models_added: Vec::new(),
            models_dropped: Vec::new(),
            outages: BTreeMap::new(),
            vertex_token_expires_at: None,
            aws_secret_access_key: None,
        }
    }
}

impl Knobs {
    /// Rates are probabilities and must add up to at most 1.
    pub fn validate(&self) -> Result<(), String> {
        let rates = self.error_rates.values().chain([&self.hang_rate]);
        let mut total = 0.0;
        for r in rates {
            if !(0.0..=1.0).contains(r) {
                return Err(format!("rate {r} is not between 0 and 1"));
            }
            total += r;
        }
        if total > 1.0 + 1e-9 {
            return Err(format!(
                "error and hang rates add up to {total}, more than 1"
            ));
        }
        for s in self.error_rates.keys() {
            if !(400..=599).contains(s) {
                return Err(format!("error rate for {s}: not an error status"));
            }
        }
        for r in [self.fence_rate, self.commentary_rate] {
            if !(0.0..=1.0).contains(&r) {
                return Err(format!("rate {r} is not between 0 and 1"));
            }
        }
        if self.rpm == 0 || self.itpm == 0 || self.otpm == 0 {
            return Err("rate limits must be at least 1".into());
        }
        for (route, o) in &self.outages {
            if !OUTAGE_ROUTES.contains(&route.as_str()) {
                return Err(format!(
                    "outages: unknown route {route:?} (anthropic, bedrock, vertex)"
                ));
            }
            if o.status != 0 && !(400..=599).contains(&o.status) {
                return Err(format!(
                    "outages.{route}: {} is not an error status",
                    o.status
                ));
            }
        }
        Ok(())
    }
}

pub const USAGE: &str = "\
anthropic-sim: a local server faithful to the Anthropic API (messages, message batches,
count_tokens, rate limits, faults, billing). Every flag has an environment twin.

usage: anthropic-sim [flags]

  --port N                    listen on 127.0.0.1:N (SIM_PORT, default 8788)
  --api-key KEY               require this x-api-key (SIM_API_KEY; default: any non-empty key)
  --rpm N                     requests per minute (SIM_RPM, default 4000)
  --itpm N                    input tokens per minute, cache reads excluded (SIM_ITPM, 2000000)
  --otpm N                    output tokens per minute (SIM_OTPM, default 400000)
  --seed N                    seed of the fault RNG (SIM_SEED, default 42)
  --latency-ms N              base latency of each answer (SIM_LATENCY_MS, default 0)
  --latency-per-token-ms F    extra latency per output token (SIM_LATENCY_PER_TOKEN_MS, 0)
  --error-rate STATUS=RATE    share of calls answering STATUS, repeatable or comma-separated,
                              e.g. --error-rate 529=0.1,500=0.05 (SIM_ERROR_RATE)
  --hang-rate F               share of calls that never answer (SIM_HANG_RATE, default 0)
  --hang-ms N                 how long a hang lasts (SIM_HANG_MS, default 600000)
  --batch-ms N                processing time of a Message Batch (SIM_BATCH_MS, default 3000)
  --fence-rate F              share of JSON answers wrapped in ```json fences (SIM_FENCE_RATE, 0.1)
  --commentary-rate F         share of JSON answers followed by commentary (SIM_COMMENTARY_RATE, 0.1)
  --retry-after-s N           retry-after of injected 429/529 answers; 0 sends none, like a
                              spend-limit 429 (SIM_RETRY_AFTER_S, default 1)
  --create-batch-delay-ms N   answer batch creates after N ms, the batch existing meanwhile
                              (SIM_CREATE_BATCH_DELAY_MS, default 0)
  --batch-faults BOOL         the random rates also hit the Message Batches endpoints (429/5xx,
                              hangs) and the requests inside batches (errored/expired)
                              (SIM_BATCH_FAULTS, default false)
  -h, --help                  this text

Prompt markers (deterministic faults, also inside batch requests):
  [[sim:STATUS]]  [[sim:STATUSxK]]  [[sim:STATUS@MODEL]]  [[sim:hang]]  [[sim:slow=MS]]

Other routes to the same models (issue 36):
  POST /model/{profile.model}/invoke            Amazon Bedrock InvokeModel, SigV4 (service bedrock)
                                                with AKIDSIMULATOR00000000 / sim-aws-secret-access-key
  POST /v1/projects/P/locations/L/publishers/anthropic/models/M:rawPredict
                                                Google Vertex AI, Bearer ya29.sim-vertex-access-token
  Knobs: outages {\"anthropic\"|\"bedrock\"|\"vertex\": {status, slow_ms}},
         vertex_token_expires_at (epoch ms)

Control: GET /_sim/stats, POST /_sim/reset, GET|PUT|PATCH /_sim/config";

/// The flags, in the order of `--help`, with their environment twins.
const FLAGS: &[(&str, &str)] = &[
    ("--port", "SIM_PORT"),
    ("--api-key", "SIM_API_KEY"),
    ("--rpm", "SIM_RPM"),
    ("--itpm", "SIM_ITPM"),
    ("--otpm", "SIM_OTPM"),
    ("--seed", "SIM_SEED"),
    ("--latency-ms", "SIM_LATENCY_MS"),
    ("--latency-per-token-ms", "SIM_LATENCY_PER_TOKEN_MS"),
    ("--error-rate", "SIM_ERROR_RATE"),
    ("--hang-rate", "SIM_HANG_RATE"),
    ("--hang-ms", "SIM_HANG_MS"),
    ("--batch-ms", "SIM_BATCH_MS"),
    ("--fence-rate", "SIM_FENCE_RATE"),
    ("--commentary-rate", "SIM_COMMENTARY_RATE"),
    ("--retry-after-s", "SIM_RETRY_AFTER_S"),
    ("--create-batch-delay-ms", "SIM_CREATE_BATCH_DELAY_MS"),
    ("--batch-faults", "SIM_BATCH_FAULTS"),
];

impl Config {
    /// Parses the environment (`env` gives a variable's value), then the flags, which win.
    /// Returns the port too. `Err` carries the message to print (the usage for `--help`).
    pub fn from_args(
        args: &[String],
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<(u16, Config), String> {
        let mut pairs: Vec<(String, String)> = FLAGS
            .iter()
            .filter_map(|(flag, var)| env(var).map(|v| (flag.to_string(), v)))
            .collect();
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            if flag == "-h" || flag == "--help" {
                return Err(USAGE.to_string());
            }
            if !FLAGS.iter().any(|(f, _)| f == flag) {
                return Err(format!("unknown flag {flag}\n\n{USAGE}"));
            }
            let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
            pairs.push((flag.clone(), value.clone()));
        }
        let mut port = 8788u16;
        let mut c = Config {
            api_key: None,
            knobs: Knobs::default(),
            clouds: CloudCredentials::default(),
        };
        let mut rates_from_flags = false;
        for (flag, v) in pairs {
            let bad = |what: &str| format!("{flag}: {v:?} is not {what}");
            let k = &mut c.knobs;
            match flag.as_str() {
                "--port" => port = v.parse().map_err(|_| bad("a port"))?,
                "--api-key" => c.api_key = Some(v),
                "--rpm" => k.rpm = v.parse().map_err(|_| bad("a number"))?,
                "--itpm" => k.itpm = v.parse().map_err(|_| bad("a number"))?,
                "--otpm" => k.otpm = v.parse().map_err(|_| bad("a number"))?,
                "--seed" => k.seed = v.parse().map_err(|_| bad("a number"))?,
                "--latency-ms" => k.latency_ms = v.parse().map_err(|_| bad("a number"))?,
                "--latency-per-token-ms" => {
                    k.latency_per_token_ms = v.parse().map_err(|_| bad("a number"))?
                }
                "--error-rate" => {
                    // Flags replace what the environment said, and add up among themselves.
                    if !rates_from_flags && args.iter().any(|a| a == "--error-rate") {
                        k.error_rates.clear();
                        rates_from_flags = true;
                    }
                    for part in v.split(',').filter(|p| !p.trim().is_empty()) {
                        let (s, r) = part.split_once('=').ok_or_else(|| bad("STATUS=RATE"))?;
                        let s: u16 = s.trim().parse().map_err(|_| bad("STATUS=RATE"))?;
                        let r: f64 = r.trim().parse().map_err(|_| bad("STATUS=RATE"))?;
                        k.error_rates.insert(s, r);
                    }
                }
                "--hang-rate" => k.hang_rate = v.parse().map_err(|_| bad("a number"))?,
                "--hang-ms" => k.hang_ms = v.parse().map_err(|_| bad("a number"))?,
                "--batch-ms" => k.batch_ms = v.parse().map_err(|_| bad("a number"))?,
                "--fence-rate" => k.fence_rate = v.parse().map_err(|_| bad("a number"))?,
                "--commentary-rate" => {
                    k.commentary_rate = v.parse().map_err(|_| bad("a number"))?
                }
                "--retry-after-s" => k.retry_after_s = v.parse().map_err(|_| bad("a number"))?,
                "--create-batch-delay-ms" => {
                    k.create_batch_delay_ms = v.parse().map_err(|_| bad("a number"))?
                }
                "--batch-faults" => k.batch_faults = v.parse().map_err(|_| bad("true or false"))?,
                _ => unreachable!("checked against FLAGS"),
            }
        }
        c.knobs.validate()?;
        Ok((port, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn flags_set_port_limits_and_faults() {
        let (port, c) = Config::from_args(
            &args("--port 9000 --rpm 5 --api-key k --error-rate 529=0.1,500=0.05 --error-rate 429=0.05"),
            no_env,
        )
        .unwrap();
        assert_eq!(port, 9000);
        assert_eq!(c.knobs.rpm, 5);
        assert_eq!(c.api_key.as_deref(), Some("k"));
        assert_eq!(c.knobs.error_rates.len(), 3);
        assert_eq!(c.knobs.error_rates[&529], 0.1);
    }

    #[test]
    fn the_environment_sets_knobs_and_flags_win() {
        let env = |k: &str| match k {
            "SIM_BATCH_MS" => Some("500".to_string()),
            "SIM_SEED" => Some("7".to_string()),
            _ => None,
        };
        let (_, c) = Config::from_args(&args("--seed 9"), env).unwrap();
        assert_eq!(c.knobs.batch_ms, 500);
        assert_eq!(c.knobs.seed, 9);
    }

    #[test]
    fn bad_flags_are_errors_that_say_why() {
        assert!(Config::from_args(&args("--bogus 1"), no_env)
            .unwrap_err()
            .contains("unknown flag"));
        assert!(Config::from_args(&args("--rpm"), no_env)
            .unwrap_err()
            .contains("needs a value"));
        assert!(Config::from_args(&args("--rpm many"), no_env).is_err());
        assert!(
            Config::from_args(&args("--error-rate 529=0.8,500=0.5"), no_env)
                .unwrap_err()
                .contains("more than 1")
        );
    }

    #[test]
    fn help_lists_every_flag_and_its_variable() {
        let help = Config::from_args(&args("--help"), no_env).unwrap_err();
        for (flag, var) in FLAGS {
            assert!(help.contains(flag), "--help lacks {flag}");
            assert!(help.contains(var), "--help lacks {var}");
        }
        for m in [
            "[[sim:STATUS]]",
            "[[sim:hang]]",
            "[[sim:slow=MS]]",
            "/_sim/config",
        ] {
            assert!(help.contains(m), "--help lacks {m}");
        }
    }
}
