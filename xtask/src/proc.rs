//! Running commands and supervising long-lived children (the simulator, `wrangler dev`).
//!
//! Children get their own process group, so stopping one also stops what it spawned (wrangler
//! starts workerd); Ctrl-C is caught by us, not delivered to them, so we can stop them in order.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::Result;

/// Runs a command to completion, inheriting the terminal; fails with `what` if it fails.
pub fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let status = cmd
        .status()
        .map_err(|e| format!("{what}: cannot start {:?}: {e}", cmd.get_program()))?;
    if !status.success() {
        return Err(format!("{what} failed ({status})").into());
    }
    Ok(())
}

/// `cargo <args>` in the workspace root, via [`run`].
pub fn cargo(args: &[&str], what: &str) -> Result<()> {
    run(
        Command::new("cargo")
            .args(args)
            .current_dir(crate::paths::root()),
        what,
    )
}

/// Runs a command and returns its stdout, or `None` if it cannot start or fails.
pub fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A supervised child process whose output goes to a log file. Stopped (with its whole process
/// group) when dropped, so a failing test or a panic never leaves it behind; and, when spawned
/// from the main thread, sent SIGTERM by the kernel if we die first.
pub struct Service {
    pub name: String,
    pub log: PathBuf,
    child: Option<Child>,
}

impl Service {
    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn spawn(name: &str, cmd: &mut Command, log: &Path) -> Result<Service> {
        use std::os::unix::process::CommandExt;
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("{name}: cannot open {log:?}: {e}"))?;
        let err = out.try_clone()?;
        // If we die without running Drop (SIGKILL, Ctrl-C in a test binary), the child still
        // gets SIGTERM. The kernel ties that to the spawning *thread*, so it is only asked for
        // from the main thread: a child spawned from a worker thread (a restart in a test) must
        // not die when that thread is recycled; Drop stops it.
        // SAFETY: getpid/gettid have no preconditions.
        let on_main_thread = unsafe { libc::getpid() == libc::gettid() };
        if on_main_thread {
            // SAFETY: prctl is async-signal-safe; it only sets an attribute of the new process.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                    Ok(())
                });
            }
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("{name}: cannot start {:?}: {e}", cmd.get_program()))?;
        Ok(Service {
            name: name.to_owned(),
            log: log.to_owned(),
            child: Some(child),
        })
    }

    /// `Some(status)` once the process has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// The last `n` lines of its log, for error messages.
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// The lines of its log that contain `needle`.
    pub fn log_lines(&self, needle: &str) -> Vec<String> {
        let text = std::fs::read(&self.log).unwrap_or_default();
        String::from_utf8_lossy(&text)
            .lines()
            .filter(|l| l.contains(needle))
            .map(str::to_owned)
            .collect()
    }

    /// SIGTERM to the process group, then SIGKILL after a grace period.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pgid = child.id() as i32;
        // SAFETY: kill(2) with a negative pid signals the process group we created.
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                // The leader is gone; make sure no grandchild (workerd) lingers.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = child.wait();
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
    }
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Catches SIGINT and SIGTERM from now on; poll [`interrupted`] to stop cleanly.
pub fn catch_interrupts() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// A free TCP port on 127.0.0.1, chosen below the kernel's ephemeral range: a port from that
/// range (what binding port 0 answers) can be taken again at once by any outgoing connection or
/// by another suite's `bind(0)` before the server that was meant to have it binds it. Still only
/// free when checked: [`crate::stack::Stack::start`] picks again when wrangler finds it taken.
pub fn free_port() -> Result<u16> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let (low, high) = (10_000u16, ephemeral_low.saturating_sub(1));
    if high > low + 1_000 {
        let span = u64::from(high - low);
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ (u64::from(std::process::id()) << 20);
        for _ in 0..256 {
            let n = NEXT.fetch_add(1, Ordering::SeqCst);
            // splitmix64 of (seed, n): spread over the span, different in each process.
            let mut z = seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            let port = low + ((z ^ (z >> 31)) % span) as u16;
            if !port_in_use(port) {
                return Ok(port);
            }
        }
    }
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Whether something already listens on 127.0.0.1:`port`.
pub fn port_in_use(port: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", port)).is_err()
}

/// Quiet, offline, non-interactive wrangler, with `config` or the root `wrangler.toml`.
/// (`--config` is given before the subcommand, as wrangler accepts global flags anywhere.)
pub fn wrangler(config: Option<&Path>) -> Command {
    let mut cmd = Command::new(crate::paths::node_bin("wrangler"));
    cmd.current_dir(crate::paths::root())
        .env("PATH", crate::paths::node_path())
        .env("WRANGLER_SEND_METRICS", "false")
        .env("CLOUDFLARE_CF_FETCH_ENABLED", "false")
        .env("WRANGLER_HIDE_BANNER", "true")
        .env("CI", "true")
        .env("NO_COLOR", "1");
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
        // Its debug log beside the config (a stack's state directory), not in ~/.config.
        if let Some(dir) = c.parent() {
            cmd.env("WRANGLER_LOG_PATH", dir.join("wrangler-cli-debug.log"));
        }
    }
    cmd
}
