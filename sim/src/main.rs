//! `anthropic-sim [flags]`: serves the simulated Anthropic API on 127.0.0.1 (`--help` for all).

use std::net::{Ipv4Addr, SocketAddr};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (port, config) = match sim::Config::from_args(&args, |k| std::env::var(k).ok()) {
        Ok(v) => v,
        Err(msg) => {
            let help = args.iter().any(|a| a == "-h" || a == "--help");
            if help {
                println!("{msg}");
                return;
            }
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("anthropic-sim: cannot bind {addr}: {e}");
            std::process::exit(1);
        }
    };
    println!("anthropic-sim listening on http://{addr}");
    let app = sim::router(sim::Sim::new(config));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        r = axum::serve(listener, app) => if let Err(e) = r { eprintln!("anthropic-sim: {e}") },
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
}
