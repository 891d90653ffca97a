//! A tiny blocking HTTP/1.1 client: enough for readiness checks and the cron trigger, without
//! pulling an HTTP stack into the tooling.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::Result;

/// `GET http://127.0.0.1:<port><path>` → (status, body).
pub fn get(port: u16, path: &str, timeout: Duration) -> Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nAccept: */*\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or("malformed HTTP answer")?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}
