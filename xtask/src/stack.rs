//! A local stack: `wrangler dev` (workerd + Miniflare: D1, R2, Queues, Durable Objects, state on
//! disk) on its own port and state directory, with migrations applied, pointed at a simulator.
//! Dropping the [`Stack`] stops wrangler and everything it started.

use std::path::{Path, PathBuf};

use std::time::{Duration, Instant};

use crate::paths::{dist, worker_build};
use crate::proc::{free_port, wrangler, Service};
use crate::wrangler_config::{self, LocalSettings};
use crate::{http, step, Result};

/// The signing secret of local stacks' webhooks for jobs sent without an API key (open mode):
/// a fixed, public value — production sets its own `WEBHOOK_SECRET` as a secret.
pub const LOCAL_WEBHOOK_SECRET: &str = "whsec_bG9jYWwtd2ViaG9vay1zZWNyZXQtMDAw";

/// How to start a stack.
#[derive(Debug, Clone)]
pub struct StackOptions {
    /// The port to serve on; 0 picks a free one (and another one if wrangler finds it taken).
    pub port: u16,
    pub state_dir: PathBuf,
    /// Wipe the state directory first.
    pub fresh: bool,
    pub settings: LocalSettings,
    /// The secret the Worker sends as `x-api-key` (a real key, or any string for the simulator).
    pub anthropic_api_key: String,
    /// How many cells (`pipeline::cells`) to run: 1 is the one Worker; more run the Worker as
    /// cell 0 (the router) and cells 1… in the same `wrangler dev`, each with its own D1,
    /// queues and bucket.
    pub cells: u32,
}

/// Where a stack's start went, in milliseconds: its D1 made (copied from the migrated template,
/// or migrated in place), and `wrangler dev` up until the Worker answered.
#[derive(Debug, Clone, Copy, Default)]
pub struct StartPhases {
    /// Copying the template state (0 when the state was migrated in place).
    pub template_ms: u64,
    /// Applying migrations: into a template made by this start, or into a kept state.
    pub migrations_ms: u64,
    /// From spawning `wrangler dev` until `/api/health` answered (every try).
    pub ready_ms: u64,
}

/// A running `wrangler dev`.
pub struct Stack {
    /// How its start went.
    pub phases: StartPhases,
    pub port: u16,
    pub base_url: String,
    pub state_dir: PathBuf,
    /// Cell 0's config (the only one without cells).
    pub config: PathBuf,
    /// Every cell's config, cell 0 first.
    pub configs: Vec<PathBuf>,
    /// The runtime's inspector (Chrome DevTools Protocol, `--inspector-port`): what reads the
    /// isolate's heap (`Runtime.getHeapUsage`). Picked again at every (re)start.
    pub inspector_port: u16,
    persist: PathBuf,
    wrangler: Service,
}

/// `wrangler dev` on `port` with persisted state, its output in `<state>/wrangler.log`; with
/// several configs, one Worker each in the same session (the first serves the port).
fn spawn_dev(
    configs: &[PathBuf],
    persist: &Path,
    (port, inspector): (u16, u16),
    state_dir: &Path,
) -> Result<Service> {
    step(&format!("starting wrangler dev on 127.0.0.1:{port}"));
    let mut cmd = wrangler(None);
    cmd.arg("dev");
    for c in configs {
        cmd.arg("--config").arg(c);
    }
    cmd.args(["--ip", "127.0.0.1", "--port", &port.to_string()])
        .args(["--inspector-port", &inspector.to_string()])
        .arg("--persist-to")
        .arg(persist)
        .args(["--test-scheduled", "--show-interactive-dev-session=false"])
        // Wrangler writes every message of every level to a debug log, by default a new file in
        // ~/.config/.wrangler/logs per command (735 MB after a day of test runs on 2026-12-04).
        // Beside the stack's own log instead, replaced with its state: it is where the reason is
        // when `wrangler dev` exits printing an empty `✘ [ERROR]` (README, Known limits).
        .env("WRANGLER_LOG_PATH", state_dir.join("wrangler-debug.log"));
    // Appends, so a restart keeps the log of the run before it.
    Service::spawn("wrangler dev", &mut cmd, &state_dir.join("wrangler.log"))
}

impl Stack {
    pub fn start(opts: StackOptions) -> Result<Stack> {
        for (what, path) in [
            ("the SPA", dist().join("index.html")),
            ("the Worker", worker_build().join("worker").join("shim.mjs")),
        ] {
            if !path.exists() {
                return Err(format!(
                    "{what} is not built ({path:?}): run `cargo xtask dev` or `cargo xtask test`"
                )
                .into());
            }
        }
        if opts.fresh {
            let _ = std::fs::remove_dir_all(&opts.state_dir);
        }
        std::fs::create_dir_all(&opts.state_dir)?;
        let config = opts.state_dir.join("wrangler.toml");
        let local = wrangler_config::local(&opts.settings)?;
        std::fs::write(&config, &local)?;
        let mut configs = vec![config.clone()];
        if opts.cells > 1 {
            configs.clear();
            for n in 0..opts.cells {
                let path = opts.state_dir.join(format!("wrangler-c{n}.toml"));
                std::fs::write(&path, wrangler_config::cell(&local, n, opts.cells)?)?;
                configs.push(path);
            }
        }
        let config = configs[0].clone();
        // Secrets for wrangler dev come from .dev.vars beside the config; never committed.
        std::fs::write(
            opts.state_dir.join(".dev.vars"),
            format!(
                "ANTHROPIC_API_KEY={}\nWEBHOOK_SECRET={LOCAL_WEBHOOK_SECRET}\n",
                opts.anthropic_api_key
            ),
        )?;
        let persist = opts.state_dir.join("wrangler-state");
        let mut phases = migrate(&configs, &persist, opts.fresh)?;

        let mut tries = 0;
        let spawned = Instant::now();
        loop {
            tries += 1;
            let port = match opts.port {
                0 => free_port()?,
                p => p,
            };
            let inspector_port = free_port()?;
            let wrangler = spawn_dev(&configs, &persist, (port, inspector_port), &opts.state_dir)?;
            let mut stack = Stack {
                phases,
                port,
                base_url: format!("http://127.0.0.1:{port}"),
                state_dir: opts.state_dir.clone(),
                config: config.clone(),
                configs: configs.clone(),
                inspector_port,
                persist: persist.clone(),
                wrangler,
            };
            match stack.wait_ready(Duration::from_secs(120)) {
                Ok(()) => {
                    phases.ready_ms = millis(spawned.elapsed());
                    stack.phases = phases;
                    return Ok(stack);
                }
                // A port that was free when picked can be taken before workerd binds it (its
                // own or the inspector's): pick both again.
                Err(e)
                    if opts.port == 0
                        && tries < 4
                        && e.to_string().contains("Address already in use") =>
                {
                    step(&format!(
                        "port {port} was taken before wrangler bound it; again"
                    ));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

fn millis(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// A migrated D1 in `persist`: a fresh state is a copy of the migrated template (made once per
/// set of migrations, see [`crate::template`]); a kept one (`cargo xtask dev`) is migrated in
/// place, so it gains the migrations added since.
fn migrate(configs: &[PathBuf], persist: &Path, fresh: bool) -> Result<StartPhases> {
    let mut phases = StartPhases::default();
    let t0 = Instant::now();
    if fresh {
        let made = crate::template::migrated_copy(configs, persist)?;
        let took = millis(t0.elapsed());
        if made {
            phases.migrations_ms = took;
        } else {
            phases.template_ms = took;
        }
        return Ok(phases);
    }
    step("applying D1 migrations (local)");
    for c in configs {
        crate::template::apply_migrations(c, persist)?;
    }
    phases.migrations_ms = millis(t0.elapsed());
    Ok(phases)
}

impl Stack {
    /// Resident memory of the local runtime's `workerd` processes (the Worker's isolates live in
    /// them), in KiB: (now, peak) — `VmRSS` and `VmHWM` of each process under wrangler, summed.
    pub fn runtime_memory_kib(&self) -> (u64, u64) {
        let Some(root) = self.wrangler.pid() else {
            return (0, 0);
        };
        let parent_of = |pid: u32| -> Option<u32> {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid …`; comm may hold spaces, so read after the last ')'.
            stat.rsplit(')')
                .next()?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        };
        let under_root = |mut pid: u32| {
            for _ in 0..16 {
                match parent_of(pid) {
                    Some(p) if p == root => return true,
                    Some(p) if p > 1 => pid = p,
                    _ => return false,
                }
            }
            false
        };
        let (mut rss, mut hwm) = (0, 0);
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() != "workerd" || !under_root(pid) {
                continue;
            }
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let field = |name: &str| {
                status
                    .lines()
                    .find(|l| l.starts_with(name))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            rss += field("VmRSS:");
            hwm += field("VmHWM:");
        }
        (rss, hwm)
    }

    /// Kills the local runtime (wrangler and workerd, mid-whatever) and starts it again on the
    /// same port and state: what a crash or a deploy does to in-flight work.
    pub fn restart(&mut self) -> Result<()> {
        self.wrangler.stop();
        // A fresh inspector port, as at the first start: the old one may be taken meanwhile.
        self.inspector_port = free_port()?;
        self.wrangler = spawn_dev(
            &self.configs,
            &self.persist,
            (self.port, self.inspector_port),
            &self.state_dir,
        )?;
        self.wait_ready(Duration::from_secs(120))
    }

    /// Waits until the Worker answers `/api/health` (with any status: a degraded report is still
    /// an answer), or fails with the end of wrangler's log.
    fn wait_ready(&mut self, timeout: Duration) -> Result<()> {
        let started = Instant::now();
        while started.elapsed() < timeout {
            if let Some(status) = self.wrangler.exited() {
                return Err(format!(
                    "wrangler dev exited ({status}) before it was ready:\n{}",
                    self.wrangler.log_tail(30)
                )
                .into());
            }
            if let Ok((code, _)) = http::get(self.port, "/api/health", Duration::from_secs(10)) {
                // 401: keys mode answers without a key — the Worker is up all the same.
                if code == 200 || code == 503 || code == 401 {
                    step(&format!(
                        "wrangler dev ready in {:.1} s",
                        started.elapsed().as_secs_f64()
                    ));
                    return Ok(());
                }
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Err(format!(
            "wrangler dev did not answer within {timeout:?}:\n{}",
            self.wrangler.log_tail(30)
        )
        .into())
    }

    /// The runtime's state on disk (`wrangler dev --persist-to`).
    pub fn persist(&self) -> &Path {
        &self.persist
    }

    /// Creates an API key in this stack's D1 (see [`crate::keys`]).
    /// The running stack may hold the database for a moment (SQLITE_BUSY): tried up to 5 times
    /// (a failed try inserted nothing; each try makes a fresh key).
    pub fn create_key(&self, user: &str, role: pipeline::identity::Role) -> Result<String> {
        let mut last = String::new();
        for attempt in 0..5 {
            if attempt > 0 {
                std::thread::sleep(Duration::from_secs(1));
            }
            match crate::keys::create(
                crate::keys::Target::Local {
                    config: &self.config,
                    persist: &self.persist,
                },
                user,
                role,
            ) {
                Ok(key) => return Ok(key),
                Err(e) => last = e.to_string(),
            }
        }
        Err(last.into())
    }

    /// Runs SQL against this stack's local D1 with `wrangler d1 execute` and answers the rows
    /// of its last statement (for query-plan checks and benchmark data; never for the product).
    /// The running stack may hold the database for a moment (SQLITE_BUSY): tried up to 5 times.
    pub fn d1(&self, sql: &str) -> Result<Vec<serde_json::Value>> {
        self.d1_cell(0, sql)
    }

    /// [`Stack::d1`] against cell `n`'s database (cell 0's is the only one without cells).
    pub fn d1_cell(&self, n: usize, sql: &str) -> Result<Vec<serde_json::Value>> {
        Ok(self.d1_each(n, sql)?.pop().unwrap_or_default())
    }

    /// The rows of every statement of `sql` (`;`-separated) on cell `n`'s database, in order:
    /// one `wrangler d1 execute` for them all. Tried up to 5 times, as [`Stack::d1`].
    pub fn d1_each(&self, n: usize, sql: &str) -> Result<Vec<Vec<serde_json::Value>>> {
        let config = self.configs.get(n).ok_or("no such cell")?;
        let mut last = String::new();
        for attempt in 0..5 {
            if attempt > 0 {
                std::thread::sleep(Duration::from_secs(1));
            }
            match self.d1_in(config, sql) {
                Ok(rows) => return Ok(rows),
                Err(e) => last = e.to_string(),
            }
        }
        Err(last.into())
    }

    fn d1_in(&self, config: &Path, sql: &str) -> Result<Vec<Vec<serde_json::Value>>> {
        let mut cmd = wrangler(Some(config));
        cmd.args(["d1", "execute", "DB", "--local", "--json", "--persist-to"])
            .arg(&self.persist)
            .args(["--command", sql]);
        let out = cmd
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|e| format!("wrangler d1 execute: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!("wrangler d1 execute failed ({}): {text}", out.status).into());
        }
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("wrangler d1 execute answered no JSON ({e}): {text}"))?;
        let statements = v.as_array().map(Vec::as_slice).unwrap_or_default();
        Ok(statements
            .iter()
            .map(|r| r["results"].as_array().cloned().unwrap_or_default())
            .collect())
    }

    /// Runs the cron now (`wrangler dev` never fires crons by itself) and waits for its end:
    /// up to 120 s, far from any run of the test or demo profile on a loaded machine (it was
    /// 30 s until a trigger went unanswered under a 300-upload burst beside five other stacks
    /// on 2026-12-04 — timed out or reset, the error was not kept; it is printed now).
    pub fn trigger_cron(&self) -> Result<u16> {
        let (code, _) = http::get(
            self.port,
            "/__scheduled?cron=*+*+*+*+*",
            Duration::from_secs(120),
        )?;
        Ok(code)
    }

    /// `Some(status)` if wrangler has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.wrangler.exited()
    }

    pub fn log_tail(&self, n: usize) -> String {
        self.wrangler.log_tail(n)
    }

    /// The lines of the runtime's log (every start of this stack's) that contain `needle`.
    pub fn log_lines(&self, needle: &str) -> Vec<String> {
        self.wrangler.log_lines(needle)
    }

    pub fn stop(&mut self) {
        self.wrangler.stop();
    }
}
