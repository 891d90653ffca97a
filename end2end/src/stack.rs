//! The stack a suite runs against: the simulator (in this process) and `wrangler dev` on free
//! ports with a fresh state directory, and what a test may read or do to it from outside the API
//! (the runtime's state on disk, D1, keys made on the command line, a restart, the cron).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use xtask::paths::target_dir;
use xtask::stack::{Stack, StackOptions, StartPhases};
use xtask::wrangler_config::{LocalSettings, Profile};

/// A running stack, shared by the tests of a suite.
pub struct TestStack {
    /// The Worker, e.g. `http://127.0.0.1:41234`.
    pub base_url: String,
    /// The simulator serving the Worker's Anthropic calls.
    pub sim_url: String,
    pub sim: sim::Sim,
    /// Where this suite may write screenshots and other artifacts.
    pub artifacts: PathBuf,
    /// How long the simulator took to start, in ms.
    pub sim_ms: u64,
    /// How the runtime's start went (see [`crate::timing`]).
    pub phases: StartPhases,
    stack: Mutex<Stack>,
    /// When a waiting test last ran the cron ([`Self::cron_paced`]).
    last_cron: Mutex<Option<Instant>>,
    /// The admin key the harness issues keys with ([`Self::issue_key`]).
    issuer: tokio::sync::OnceCell<String>,
    /// The runtime's state on disk (`--persist-to`).
    persist: PathBuf,
}

impl TestStack {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    /// The runtime, held for one operation (a restart holds it until the Worker answers again,
    /// so a cron asked for meanwhile waits instead of failing).
    fn runtime(&self) -> MutexGuard<'_, Stack> {
        self.stack.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The runtime's inspector port (see [`crate::heap`]); a restart picks another.
    pub fn inspector_port(&self) -> u16 {
        self.runtime().inspector_port
    }

    /// The last `n` lines the runtime (`wrangler dev`) printed: the Worker's logs among them.
    pub fn runtime_log(&self, n: usize) -> String {
        self.runtime().log_tail(n)
    }

    /// The lines the runtime printed that contain `needle` (the Worker's `use:` lines, say).
    pub fn log_lines(&self, needle: &str) -> Vec<String> {
        self.runtime().log_lines(needle)
    }

    /// The Worker's `envelope exceeded` lines: every invocation that passed a production
    /// limit (`crate::meter` in the Worker logs the first limit each one passes).
    pub fn envelope_exceeded(&self) -> Vec<String> {
        self.runtime().log_lines("envelope exceeded")
    }

    /// Resident memory of the runtime's `workerd` processes in KiB: (now, peak since start).
    pub fn runtime_memory_kib(&self) -> (u64, u64) {
        self.runtime().runtime_memory_kib()
    }

    /// Kills the local runtime mid-run and starts it again on the same port and state.
    pub fn restart(&self) {
        self.runtime()
            .restart()
            .unwrap_or_else(|e| panic!("restart: {e}"));
    }

    /// [`Self::restart`] from async code (it blocks for seconds).
    pub async fn restart_now(self: &Arc<Self>) {
        let s = self.clone();
        tokio::task::spawn_blocking(move || s.restart())
            .await
            .unwrap();
    }

    /// Objects in the local R2 bucket, counted from the runtime's state on disk (what a refused
    /// request must not leave behind).
    pub fn r2_objects(&self) -> usize {
        fn walk(dir: &std::path::Path, in_blobs: bool) -> usize {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return 0;
            };
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        walk(&p, in_blobs || p.file_name().is_some_and(|n| n == "blobs"))
                    } else {
                        usize::from(in_blobs)
                    }
                })
                .sum()
        }
        walk(
            &self
                .artifacts
                .parent()
                .expect("state dir")
                .join("wrangler-state"),
            false,
        )
    }

    /// An API key for `user` made with the command-line path (`cargo xtask key create`).
    pub fn create_key(&self, user: &str, admin: bool) -> String {
        let role = if admin {
            pipeline::identity::Role::Admin
        } else {
            pipeline::identity::Role::User
        };
        self.runtime()
            .create_key(user, role)
            .unwrap_or_else(|e| panic!("create a key for {user}: {e}"))
    }

    /// A key for `user`, issued over HTTP (`POST /api/keys`) as an operator issues keys once the
    /// first admin key exists: by the harness's own admin key (user `e2e-issuer`), which is made
    /// with the row the command line would store, written straight to D1's file once per stack.
    /// Each command-line key is a `wrangler d1 execute` — two Node processes and a runtime,
    /// about 1.5 s of CPU — and the suites issue dozens of keys; the command line itself
    /// ([`Self::create_key`]) is the `access` suite's subject.
    pub async fn issue_key(self: &Arc<Self>, user: &str, admin: bool) -> String {
        let issuer = self
            .issuer
            .get_or_init(|| async {
                let (key, sql) =
                    xtask::keys::new_row("e2e-issuer", pipeline::identity::Role::Admin)
                        .unwrap_or_else(|e| panic!("the harness's key: {e}"));
                self.d1_now(&sql).await;
                key
            })
            .await;
        let role = if admin { "admin" } else { "user" };
        let body = serde_json::json!({"user_id": user, "role": role});
        let (status, created) = self.key(Some(issuer)).post_json("/api/keys", &body).await;
        assert_eq!(status, 201, "issue a key for {user}: {created}");
        created["key"]
            .as_str()
            .unwrap_or_else(|| panic!("a key in {created}"))
            .to_string()
    }

    /// Rows of a SQL statement run on the stack's local D1: one statement straight on its file
    /// ([`crate::d1_file`]), an `EXPLAIN` or several statements with `wrangler d1 execute`.
    pub fn d1(&self, sql: &str) -> Vec<serde_json::Value> {
        self.d1_cell(0, sql)
    }

    /// [`Self::d1`] on cell `n`'s database.
    pub fn d1_cell(&self, n: usize, sql: &str) -> Vec<serde_json::Value> {
        if let Some(file) = self.database_file(n) {
            match crate::d1_file::run(&file, sql) {
                Ok(Some(rows)) => return rows,
                Ok(None) => {}
                Err(e) => panic!("d1 of cell {n}: {sql}: {e}"),
            }
        }
        self.runtime()
            .d1_cell(n, sql)
            .unwrap_or_else(|e| panic!("d1 of cell {n}: {sql}: {e}"))
    }

    /// Cell `n`'s database file, by the `database_id` its config gives the `DB` binding.
    fn database_file(&self, n: usize) -> Option<std::path::PathBuf> {
        let config = self.runtime().configs.get(n)?.clone();
        let id = xtask::wrangler_config::database_id(&config).ok()?;
        crate::d1_file::database_of(&self.persist, &id)
    }

    /// The rows of each of `statements`, in order, from one `wrangler d1 execute` (a plan the
    /// runtime's own SQLite makes: `EXPLAIN QUERY PLAN` does not read from the file).
    pub async fn d1_each(self: &Arc<Self>, statements: &[String]) -> Vec<Vec<serde_json::Value>> {
        let (s, sql) = (self.clone(), statements.join(";\n"));
        let rows = tokio::task::spawn_blocking(move || s.runtime().d1_each(0, &sql))
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("d1 statements: {e}"));
        assert_eq!(rows.len(), statements.len(), "one result per statement");
        rows
    }

    /// [`Self::d1`] from async code (`wrangler d1 execute` takes seconds).
    pub async fn d1_now(self: &Arc<Self>, sql: &str) -> Vec<serde_json::Value> {
        let (s, sql) = (self.clone(), sql.to_string());
        tokio::task::spawn_blocking(move || s.d1(&sql))
            .await
            .unwrap()
    }

    /// The `n` column of a one-row count (`SELECT COUNT(*) AS n …`) on the stack's D1.
    pub fn d1_count(&self, sql: &str) -> u64 {
        let rows = self.d1(sql);
        rows.first()
            .and_then(|r| r["n"].as_u64())
            .unwrap_or_else(|| panic!("{sql}: no count in {rows:?}"))
    }

    /// [`Self::d1_count`] from async code.
    pub async fn d1_count_now(self: &Arc<Self>, sql: &str) -> u64 {
        let (s, sql) = (self.clone(), sql.to_string());
        tokio::task::spawn_blocking(move || s.d1_count(&sql))
            .await
            .unwrap()
    }

    /// Runs the cron now, as the dev tooling does every minute.
    pub fn trigger_cron(&self) -> u16 {
        self.runtime()
            .trigger_cron()
            .unwrap_or_else(|e| panic!("cron trigger: {e}"))
    }

    /// [`Self::trigger_cron`] that reports a failure (a runtime being restarted, a connection
    /// reset under a burst) instead of panicking.
    pub fn try_trigger_cron(&self) -> Option<u16> {
        self.runtime()
            .trigger_cron()
            .inspect_err(|e| eprintln!("cron trigger not answered: {e}"))
            .ok()
    }

    /// [`Self::trigger_cron`] from async code; answers the trigger's status.
    pub async fn cron(self: &Arc<Self>) -> u16 {
        let s = self.clone();
        tokio::task::spawn_blocking(move || s.trigger_cron())
            .await
            .unwrap()
    }

    /// The cron as a waiting test nudges it: run now unless it ran less than the test
    /// profile's cron period ago (1 s), as the platform would — not four times a second
    /// while a test polls, which only loads the machine (a cron run reads and writes D1,
    /// polls batches, flushes, reconciles).
    pub async fn cron_paced(self: &Arc<Self>) {
        let period = Duration::from_secs(
            xtask::wrangler_config::Profile::Test
                .timing()
                .cron_period_s
                .into(),
        );
        let due = {
            let mut last = self.last_cron.lock().unwrap_or_else(|p| p.into_inner());
            let due = last.is_none_or(|t| t.elapsed() >= period);
            if due {
                *last = Some(Instant::now());
            }
            due
        };
        // A nudge that is not answered (seen 2026-12-04 under a 300-upload burst) is one look
        // fewer: the wait goes on and nudges again, and fails on its own condition if the cron
        // never runs.
        if due {
            self.try_cron().await;
        }
    }

    /// [`Self::try_trigger_cron`] from async code.
    pub async fn try_cron(self: &Arc<Self>) -> Option<u16> {
        let s = self.clone();
        tokio::task::spawn_blocking(move || s.try_trigger_cron())
            .await
            .unwrap()
    }
}

/// How a suite's stack differs from the default one: the simulator's knobs and further Worker
/// vars (which win over the test profile's).
#[derive(Debug, Clone, Default)]
pub struct StackConfig {
    pub knobs: sim::Knobs,
    pub vars: Vec<(String, String)>,
    /// Cells (`pipeline::cells`) the Worker runs as; 1 is the one Worker.
    pub cells: u32,
}

impl StackConfig {
    /// The default stack with these Worker vars.
    pub fn vars(vars: &[(&str, &str)]) -> StackConfig {
        StackConfig {
            knobs: sim::Knobs::default(),
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cells: 1,
        }
    }
}

/// Starts the simulator (in this process, on `rt`) and a fresh `wrangler dev` pointed at it.
/// Call it from the thread that outlives the suite: wrangler is tied to it (see `xtask::proc`).
pub fn spawn_stack(suite: &str, rt: &tokio::runtime::Runtime) -> TestStack {
    spawn_stack_with(suite, rt, sim::Knobs::default(), Vec::new())
}

/// [`spawn_stack`] with the simulator's knobs and further Worker vars (which win over the
/// profile's) chosen by the suite.
pub fn spawn_stack_with(
    suite: &str,
    rt: &tokio::runtime::Runtime,
    knobs: sim::Knobs,
    vars: Vec<(String, String)>,
) -> TestStack {
    spawn_stack_of(
        suite,
        rt,
        StackConfig {
            knobs,
            vars,
            cells: 1,
        },
    )
}

/// [`spawn_stack_with`] for a whole [`StackConfig`] (with its cells).
pub fn spawn_stack_of(suite: &str, rt: &tokio::runtime::Runtime, config: StackConfig) -> TestStack {
    let StackConfig { knobs, vars, cells } = config;
    let t0 = Instant::now();
    let (sim_addr, sim) = rt
        .block_on(sim::spawn(sim::Config {
            api_key: None,
            knobs,
            clouds: Default::default(),
        }))
        .expect("start anthropic-sim");
    let sim_url = format!("http://{sim_addr}");
    let sim_ms = crate::timing::ms(t0.elapsed());
    let state_dir = target_dir().join("e2e").join(suite);
    let artifacts = state_dir.join("artifacts");
    let opts = StackOptions {
        port: 0,
        state_dir,
        fresh: true,
        settings: LocalSettings {
            profile: Profile::Test,
            auth_mode: "open",
            anthropic_base_url: sim_url.clone(),
            extra_vars: vec![
                // Dead letters are announced to the simulator's webhook sink.
                (
                    "NOTIFY_WEBHOOK_URL".into(),
                    format!("{sim_url}/_sim/webhooks"),
                ),
                // Half the users take the queue path of POST /api/claude.
                ("QUEUE_ROLLOUT_PERCENT".into(), "50".into()),
            ]
            .into_iter()
            // `{sim}` in a suite's var is the simulator's URL (another route's base URL).
            .chain(
                vars.into_iter()
                    .map(|(k, v)| (k, v.replace("{sim}", &sim_url))),
            )
            .collect(),
        },
        anthropic_api_key: SIM_KEY.into(),
        cells,
    };
    let stack = Stack::start(opts).unwrap_or_else(|e| panic!("the local stack did not start: {e}"));
    std::fs::create_dir_all(&artifacts).expect("artifacts dir");
    TestStack {
        base_url: stack.base_url.clone(),
        sim_url,
        sim,
        artifacts,
        sim_ms,
        phases: stack.phases,
        persist: stack.persist().to_path_buf(),
        stack: Mutex::new(stack),
        last_cron: Mutex::new(None),
        issuer: tokio::sync::OnceCell::new(),
    }
}

/// The key the Worker sends the simulator (which accepts any).
pub const SIM_KEY: &str = "sim-test-key";
