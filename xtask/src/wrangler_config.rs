//! Local wrangler configs, generated from the production `wrangler.toml`: same bindings, with
//! absolute paths (the config lives in a state directory), open or keys auth, the simulator's URL
//! and a timing profile. Local and production differ only in configuration.

use pipeline::timing::Timing;
use toml::{Table, Value};

use crate::paths::root;
use crate::Result;

/// Which timing profile of the contract a local stack runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// `cargo xtask dev`: lively, batches flushed and polled within a minute.
    Demo,
    /// The end-to-end suites: seconds, not minutes.
    Test,
}

impl Profile {
    pub fn timing(self) -> Timing {
        match self {
            Profile::Demo => Timing::demo(),
            Profile::Test => Timing::test(),
        }
    }

    /// `max_batch_timeout` of the high and bulk consumers (the DLQ keeps its own).
    fn batch_timeouts_s(self) -> (i64, i64) {
        match self {
            Profile::Demo => (0, 5),
            Profile::Test => (0, 1),
        }
    }
}

/// What differs between a local stack and production.
#[derive(Debug, Clone)]
pub struct LocalSettings {
    pub profile: Profile,
    pub auth_mode: &'static str,
    pub anthropic_base_url: String,
    /// Further vars (e.g. `NOTIFY_WEBHOOK_URL` pointing at the simulator's sink in tests).
    pub extra_vars: Vec<(String, String)>,
}

/// Reads the production config.
pub fn production() -> Result<Table> {
    let path = root().join("wrangler.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {path:?}: {e}"))?;
    Ok(text
        .parse::<Table>()
        .map_err(|e| format!("{path:?}: {e}"))?)
}

/// The production config rewritten for a local stack.
pub fn local(settings: &LocalSettings) -> Result<String> {
    let mut t = production()?;
    let abs = |p: &Value| -> Value {
        Value::String(
            root()
                .join(p.as_str().unwrap_or_default())
                .to_string_lossy()
                .into(),
        )
    };
    if let Some(main) = t.get("main") {
        let v = abs(main);
        t.insert("main".into(), v);
    }
    if let Some(Value::Table(assets)) = t.get_mut("assets") {
        if let Some(dir) = assets.get("directory") {
            let v = abs(dir);
            assets.insert("directory".into(), v);
        }
    }
    if let Some(Value::Array(dbs)) = t.get_mut("d1_databases") {
        for db in dbs.iter_mut().filter_map(Value::as_table_mut) {
            if let Some(dir) = db.get("migrations_dir") {
                let v = abs(dir);
                db.insert("migrations_dir".into(), v);
            }
        }
    }
    let vars = t
        .entry("vars")
        .or_insert_with(|| Value::Table(Table::new()))
        .as_table_mut()
        .ok_or("[vars] must be a table")?;
    vars.insert("AUTH_MODE".into(), settings.auth_mode.into());
    vars.insert(
        "ANTHROPIC_BASE_URL".into(),
        settings.anthropic_base_url.clone().into(),
    );
    for (name, value) in settings.profile.timing().to_vars() {
        vars.insert(name.into(), value.into());
    }
    // The token budget starts from the simulator's default limits (production starts from the
    // first usage tier); either way the answers' rate-limit headers teach it the real ones.
    for (name, value) in [
        ("BUDGET_RPM", "4000"),
        ("BUDGET_ITPM", "2000000"),
        ("BUDGET_OTPM", "400000"),
        // What each request asked of D1, as headers (local stacks only).
        ("D1_STATS", "on"),
        // Refuse what production would: `wrangler dev` enforces no per-invocation limit.
        ("ENVELOPE_STRICT", "on"),
        // A webhook receiver on this machine (`http://127.0.0.1:…`) is allowed locally only.
        ("WEBHOOK_ALLOW_LOOPBACK", "on"),
    ] {
        vars.insert(name.into(), value.into());
    }
    for (name, value) in &settings.extra_vars {
        vars.insert(name.clone(), value.clone().into());
    }
    let (high, bulk) = settings.profile.batch_timeouts_s();
    if let Some(Value::Table(queues)) = t.get_mut("queues") {
        if let Some(Value::Array(consumers)) = queues.get_mut("consumers") {
            for c in consumers.iter_mut().filter_map(Value::as_table_mut) {
                let name = c.get("queue").and_then(Value::as_str).unwrap_or_default();
                let timeout = if name.ends_with("-high") {
                    high
                } else if name.ends_with("-bulk") {
                    bulk
                } else {
                    continue;
                };
                c.insert("max_batch_timeout".into(), Value::Integer(timeout));
            }
        }
    }
    Ok(toml::to_string(&t)?)
}

/// The `database_id` the config at `path` gives the `DB` binding (the local runtime names the
/// database's file by it).
pub fn database_id(path: &std::path::Path) -> Result<String> {
    let t: Table = toml::from_str(&std::fs::read_to_string(path)?)?;
    t.get("d1_databases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_table)
        .find(|db| db.get("binding").and_then(Value::as_str) == Some("DB"))
        .and_then(|db| db.get("database_id")?.as_str().map(String::from))
        .ok_or_else(|| format!("no DB binding in {}", path.display()).into())
}

/// A local config (`local`'s text) rewritten as cell `n` of `cells` (`pipeline::cells`): cell 0
/// keeps the name, the assets and the budget object, routes by user (`CELLS`) and binds every
/// other cell as `CELL_<i>`; cell `n` > 0 is `<name>-c<n>`, with its own D1 database, queues and
/// R2 bucket, and binds cell 0's budget object (the API's rate limits are the account's).
pub fn cell(local: &str, n: u32, cells: u32) -> Result<String> {
    let mut t: Table = local.parse().map_err(|e| format!("local config: {e}"))?;
    let name = t
        .get("name")
        .and_then(Value::as_str)
        .ok_or("the config has no name")?
        .to_string();
    let cell_name = |i: u32| format!("{name}-c{i}");
    if n == 0 {
        let vars = t
            .entry("vars")
            .or_insert_with(|| Value::Table(Table::new()))
            .as_table_mut()
            .ok_or("[vars] must be a table")?;
        vars.insert("CELLS".into(), cells.to_string().into());
        let services: Vec<Value> = (1..cells)
            .map(|i| {
                let mut s = Table::new();
                s.insert("binding".into(), format!("CELL_{i}").into());
                s.insert("service".into(), cell_name(i).into());
                Value::Table(s)
            })
            .collect();
        t.insert("services".into(), Value::Array(services));
        return Ok(toml::to_string(&t)?);
    }
    t.insert("name".into(), cell_name(n).into());
    t.remove("assets");
    // The budget object's class lives in cell 0: no class migration here.
    t.remove("migrations");
    if let Some(Value::Table(dos)) = t.get_mut("durable_objects") {
        if let Some(Value::Array(bindings)) = dos.get_mut("bindings") {
            for b in bindings.iter_mut().filter_map(Value::as_table_mut) {
                b.insert("script_name".into(), name.clone().into());
            }
        }
    }
    if let Some(Value::Array(dbs)) = t.get_mut("d1_databases") {
        for db in dbs.iter_mut().filter_map(Value::as_table_mut) {
            db.insert(
                "database_id".into(),
                format!("00000000-0000-0000-0000-{n:012}").into(),
            );
            db.insert("database_name".into(), cell_name(n).into());
        }
    }
    let renamed = |q: &str| q.replacen(&name, &cell_name(n), 1);
    if let Some(Value::Table(queues)) = t.get_mut("queues") {
        for list in ["consumers", "producers"] {
            if let Some(Value::Array(entries)) = queues.get_mut(list) {
                for e in entries.iter_mut().filter_map(Value::as_table_mut) {
                    for key in ["queue", "dead_letter_queue"] {
                        if let Some(q) = e.get(key).and_then(Value::as_str).map(renamed) {
                            e.insert(key.into(), q.into());
                        }
                    }
                }
            }
        }
    }
    if let Some(Value::Array(buckets)) = t.get_mut("r2_buckets") {
        for b in buckets.iter_mut().filter_map(Value::as_table_mut) {
            if let Some(bucket) = b.get("bucket_name").and_then(Value::as_str).map(renamed) {
                b.insert("bucket_name".into(), bucket.into());
            }
        }
    }
    Ok(toml::to_string(&t)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> LocalSettings {
        LocalSettings {
            profile: Profile::Test,
            auth_mode: "open",
            anthropic_base_url: "http://127.0.0.1:9999".into(),
            extra_vars: vec![("NOTIFY_WEBHOOK_URL".into(), "http://hook".into())],
        }
    }

    #[test]
    fn wrangler_toml_vars_are_the_production_timing_profile() {
        let t = production().unwrap();
        let vars = t["vars"].as_table().unwrap();
        let from_toml =
            Timing::from_vars(|n| vars.get(n).and_then(|v| v.as_str()).map(String::from)).unwrap();
        assert_eq!(from_toml, Timing::production());
        for (name, _) in Timing::production().to_vars() {
            assert!(vars.contains_key(name), "wrangler.toml lacks {name}");
        }
    }

    /// Every var the Worker reads (a name constant of `worker/src/config.rs`, and `CELLS`)
    /// stands in `wrangler.toml`: as a var with its default, or — a secret, a binding, or the
    /// cells' count the tooling sets — named in it, so an operator sees what can be tuned.
    #[test]
    fn every_var_the_worker_reads_stands_in_wrangler_toml() {
        let config = std::fs::read_to_string(root().join("worker/src/config.rs")).unwrap();
        let text = std::fs::read_to_string(root().join("wrangler.toml")).unwrap();
        let t = production().unwrap();
        let vars = t["vars"].as_table().unwrap();
        let names: Vec<&str> = config
            .lines()
            .filter_map(|l| l.strip_prefix("pub const ")?.split_once(": &str = \""))
            .map(|(name, _)| name)
            .chain(["CELLS"])
            .collect();
        assert!(names.len() > 30, "{names:?}");
        let named_only = [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_ADMIN_KEY",
            "WEBHOOK_SECRET",
            "METRICS_SCRAPE_TOKEN",
            "QUEUE_ROLLOUT_PERCENT",
            "CELLS",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "VERTEX_ACCESS_TOKEN",
            "VERTEX_SERVICE_ACCOUNT",
        ];
        let binding = |name: &str| text.contains(&format!("= \"{name}\""));
        for name in names {
            if named_only.contains(&name) || binding(name) {
                assert!(text.contains(name), "wrangler.toml does not name {name}");
            } else {
                assert!(
                    vars.contains_key(name),
                    "wrangler.toml lacks the var {name}"
                );
            }
        }
    }

    #[test]
    fn production_defaults_to_keys_mode() {
        let t = production().unwrap();
        assert_eq!(t["vars"]["AUTH_MODE"].as_str(), Some("keys"));
    }

    #[test]
    fn the_local_config_keeps_every_binding_and_overrides_only_configuration() {
        let local: Table = local(&settings()).unwrap().parse().unwrap();
        let prod = production().unwrap();
        for key in ["r2_buckets", "durable_objects", "migrations", "triggers"] {
            assert_eq!(local[key], prod[key], "{key} differs");
        }
        assert_eq!(local["d1_databases"][0]["binding"].as_str(), Some("DB"));
        assert!(local["d1_databases"][0]["migrations_dir"]
            .as_str()
            .unwrap()
            .ends_with("/migrations"));
        assert_eq!(local["vars"]["AUTH_MODE"].as_str(), Some("open"));
        assert_eq!(
            local["vars"]["ANTHROPIC_BASE_URL"].as_str(),
            Some("http://127.0.0.1:9999")
        );
        assert_eq!(local["vars"]["BACKOFF_BASE_S"].as_str(), Some("1"));
        assert_eq!(
            local["vars"]["NOTIFY_WEBHOOK_URL"].as_str(),
            Some("http://hook")
        );
        assert!(local["main"].as_str().unwrap().starts_with('/'));
        let consumers = local["queues"]["consumers"].as_array().unwrap();
        assert_eq!(consumers.len(), 3);
        assert_eq!(
            consumers[0]["max_retries"],
            prod["queues"]["consumers"][0]["max_retries"]
        );
    }

    #[test]
    fn the_consumers_max_retries_agree_with_the_jobs_retry_budget() {
        use pipeline::status::Lane;
        let prod = production().unwrap();
        for c in prod["queues"]["consumers"].as_array().unwrap() {
            let queue = c["queue"].as_str().unwrap();
            let lane = if queue.ends_with("-high") {
                Lane::High
            } else if queue.ends_with("-bulk") {
                Lane::Bulk
            } else {
                continue;
            };
            assert_eq!(
                c["max_retries"].as_integer(),
                Some(i64::from(pipeline::retry::max_deliveries(lane)) - 1),
                "{queue}"
            );
        }
    }

    #[test]
    fn every_worker_path_of_the_contract_runs_the_worker_first() {
        let t = production().unwrap();
        let list: Vec<&str> = t["assets"]["run_worker_first"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        for p in [
            "/feedback",
            "/jobs",
            "/jobs/*",
            "/batches",
            "/batches/*",
            "/api/*",
            "/__scheduled",
            // The pages with an id get the frame shell (worker/src/pages.rs).
            "/ui/jobs/*",
            "/ui/batches/*",
        ] {
            assert!(list.contains(&p), "{p} missing from run_worker_first");
        }
    }

    #[test]
    fn each_cell_has_its_own_database_queues_and_bucket_and_cell_0_routes_to_the_others() {
        let local = local(&settings()).unwrap();
        let zero: Table = cell(&local, 0, 2).unwrap().parse().unwrap();
        let one: Table = cell(&local, 1, 2).unwrap().parse().unwrap();
        let name = zero["name"].as_str().unwrap();
        assert_eq!(zero["vars"]["CELLS"].as_str(), Some("2"));
        assert_eq!(zero["services"][0]["binding"].as_str(), Some("CELL_1"));
        assert_eq!(
            zero["services"][0]["service"].as_str(),
            one["name"].as_str()
        );
        assert!(one.get("assets").is_none() && one.get("migrations").is_none());
        assert!(one["vars"].get("CELLS").is_none());
        assert_eq!(
            one["durable_objects"]["bindings"][0]["script_name"].as_str(),
            Some(name)
        );
        for key in ["d1_databases", "r2_buckets"] {
            assert_ne!(zero[key], one[key], "{key} is shared");
        }
        let queues = |t: &Table| -> Vec<String> {
            t["queues"]["consumers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["queue"].as_str().unwrap().to_string())
                .collect()
        };
        let (q0, q1) = (queues(&zero), queues(&one));
        assert!(q1.iter().all(|q| !q0.contains(q)), "{q0:?} {q1:?}");
        assert!(one["queues"]["producers"][0]["queue"]
            .as_str()
            .unwrap()
            .contains("-c1-"));
    }
}
