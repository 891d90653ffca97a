//! `cargo xtask dev`: the whole stack locally — the simulator (unless a real key is set) and
//! wrangler dev on the stack's own state directory (by port), the cron every minute, every child
//! stopped on Ctrl-C.

use std::process::Command;
use std::time::{Duration, Instant};

use xtask::paths::{dev_state, target_dir, DEV_PORT};
use xtask::proc::{self, cargo, port_in_use, Service};
use xtask::stack::{Stack, StackOptions};
use xtask::wrangler_config::{LocalSettings, Profile};
use xtask::{step, tools, Result};

use crate::{build_all, USAGE};

struct DevArgs {
    reset: bool,
    /// Keys mode (`AUTH_MODE=keys`) with a demo admin and user.
    auth: bool,
    port: u16,
    sim_port: u16,
}

fn parse_dev(args: &[String]) -> Result<DevArgs> {
    let mut a = DevArgs {
        reset: false,
        auth: false,
        port: DEV_PORT,
        sim_port: DEV_PORT + 1,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut port = || -> Result<u16> {
            Ok(it
                .next()
                .ok_or(format!("{flag} needs a port"))?
                .parse()
                .map_err(|_| format!("{flag}: not a port"))?)
        };
        match flag.as_str() {
            "--reset" => a.reset = true,
            "--auth" => a.auth = true,
            "--port" => a.port = port()?,
            "--sim-port" => a.sim_port = port()?,
            other => return Err(format!("unknown flag {other}\n{USAGE}").into()),
        }
    }
    Ok(a)
}

/// The demo admin and user of `dev --auth`: created on the first start, kept (local dev only)
/// in the stack's state (`.state/dev/demo-keys.txt` on the default port) so that later starts
/// can print them again.
fn demo_keys(stack: &Stack) -> Result<String> {
    let file = stack.state_dir.join("demo-keys.txt");
    if let Ok(text) = std::fs::read_to_string(&file) {
        return Ok(text);
    }
    step("creating the demo admin and user keys");
    let admin = stack.create_key("admin", pipeline::identity::Role::Admin)?;
    let user = stack.create_key("demo", pipeline::identity::Role::User)?;
    let text = format!("admin (admin): {admin}\ndemo  (user):  {user}\n");
    std::fs::write(&file, &text)?;
    Ok(text)
}

/// The API base URL with a real key: `ANTHROPIC_BASE_URL` when set (a gateway or proxy), else
/// the API itself; a trailing slash is dropped.
fn real_base_url(var: Option<String>) -> String {
    var.map(|v| v.trim().trim_end_matches('/').to_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "https://api.anthropic.com".into())
}

/// Builds everything, starts the simulator (unless a real key is set) and wrangler dev, triggers
/// the cron every minute, and stops every child cleanly on Ctrl-C.
pub fn dev(args: &[String]) -> Result<()> {
    let args = parse_dev(args)?;
    let started = Instant::now();
    tools::ensure(false)?;
    for (what, port) in [("the Worker", args.port), ("the simulator", args.sim_port)] {
        if port_in_use(port) {
            return Err(format!(
                "port {port} (for {what}) is in use: is another `cargo xtask dev` running? \
                 Choose others with --port / --sim-port."
            )
            .into());
        }
    }
    let real_key = std::env::var("ANTHROPIC_API_KEY")
        .ok()
        .filter(|k| !k.trim().is_empty());
    build_all()?;
    // Keyed by the Worker's port: a second dev stack never rewrites this one's config.
    let state = dev_state(args.port);
    if args.reset {
        step(&format!(
            "--reset: wiping local state ({})",
            state.display()
        ));
        let _ = std::fs::remove_dir_all(&state);
    }
    std::fs::create_dir_all(&state)?;
    let sim_log = state.join("anthropic-sim.log");
    let mut sim = None;
    let base_url = match &real_key {
        Some(_) => {
            // ANTHROPIC_BASE_URL points the Worker at a gateway (Cloudflare AI Gateway, a
            // corporate proxy) in front of the real API.
            let url = real_base_url(std::env::var("ANTHROPIC_BASE_URL").ok());
            step(&format!(
                "ANTHROPIC_API_KEY is set: the Worker calls the real Anthropic API at {url}"
            ));
            url
        }
        None => {
            step("building anthropic-sim");
            cargo(
                &["build", "-p", "sim", "--bin", "anthropic-sim"],
                "cargo build -p sim",
            )?;
            let bin = target_dir().join("debug").join("anthropic-sim");
            sim = Some(Service::spawn(
                "anthropic-sim",
                Command::new(bin).args(["--port", &args.sim_port.to_string()]),
                &sim_log,
            )?);
            format!("http://127.0.0.1:{}", args.sim_port)
        }
    };
    proc::catch_interrupts();
    let mut stack = Stack::start(StackOptions {
        port: args.port,
        state_dir: state.clone(),
        fresh: false,
        settings: LocalSettings {
            profile: Profile::Demo,
            auth_mode: if args.auth { "keys" } else { "open" },
            anthropic_base_url: base_url.clone(),
            extra_vars: Vec::new(),
        },
        anthropic_api_key: real_key.unwrap_or_else(|| "sim-local-key".into()),
        cells: 1,
    })?;
    let _ = stack.trigger_cron();
    let demo_keys = if args.auth {
        Some(demo_keys(&stack)?)
    } else {
        None
    };
    println!();
    println!(
        "  claude-pipeline is running ({:.0} s to start)",
        started.elapsed().as_secs_f64()
    );
    println!("  SPA and API   {}/", stack.base_url);
    println!("  health        {}/api/health", stack.base_url);
    println!(
        "  Anthropic     {base_url}{}",
        if sim.is_some() {
            "  (anthropic-sim)"
        } else {
            ""
        }
    );
    println!(
        "  cron          {}/__scheduled?cron=*+*+*+*+*  (triggered every minute)",
        stack.base_url
    );
    println!("  state         {}", stack.state_dir.display());
    println!(
        "  logs          {}",
        stack.state_dir.join("wrangler.log").display()
    );
    if sim.is_some() {
        println!("                {}", sim_log.display());
    }
    if let Some(keys) = &demo_keys {
        println!(
            "  auth          keys mode; demo keys (kept in {}):",
            state.join("demo-keys.txt").display()
        );
        for line in keys.lines() {
            println!("                {line}");
        }
        println!(
            "                more: cargo xtask key create --user NAME [--admin]{}",
            if args.port == DEV_PORT {
                String::new()
            } else {
                format!(" --port {}", args.port)
            }
        );
    }
    println!("  Ctrl-C stops everything.");
    println!();
    let mut next_cron = Instant::now() + Duration::from_secs(60);
    while !proc::interrupted() {
        std::thread::sleep(Duration::from_millis(200));
        if let Some(status) = stack.exited() {
            return Err(format!("wrangler dev exited ({status}):\n{}", stack.log_tail(30)).into());
        }
        if let Some(s) = sim.as_mut() {
            if let Some(status) = s.exited() {
                return Err(format!("anthropic-sim exited ({status}):\n{}", s.log_tail(20)).into());
            }
        }
        if Instant::now() >= next_cron {
            next_cron += Duration::from_secs(60);
            match stack.trigger_cron() {
                Ok(200) => {}
                Ok(code) => eprintln!("cron trigger answered {code}"),
                Err(e) => eprintln!("cron trigger failed: {e}"),
            }
        }
    }
    step("stopping wrangler dev and anthropic-sim");
    stack.stop();
    drop(sim);
    step("stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::real_base_url;

    #[test]
    fn a_real_key_calls_the_api_or_the_gateway_named_by_anthropic_base_url() {
        assert_eq!(real_base_url(None), "https://api.anthropic.com");
        assert_eq!(
            real_base_url(Some("  ".into())),
            "https://api.anthropic.com"
        );
        assert_eq!(
            real_base_url(Some(
                "https://gateway.ai.cloudflare.com/v1/acct/gw/anthropic/".into()
            )),
            "https://gateway.ai.cloudflare.com/v1/acct/gw/anthropic"
        );
    }
}
