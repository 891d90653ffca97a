//! Completion webhooks, signed as the Standard Webhooks specification describes
//! (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
//! when a job that names a `callback_url` (or whose API key names one) ends, the Worker posts its
//! final view with `webhook-id` (the same on every attempt and every re-send), `webhook-timestamp`
//! (seconds, the attempt's) and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of
//! `id.timestamp.body` under the key's secret, `whsec_` and base64). Failed attempts are retried
//! with backoff, at most [`MAX_ATTEMPTS`] times.

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::ApiError;

/// Where a job's final view goes, and the API key whose secret signs it (`None`: the
/// deployment's `WEBHOOK_SECRET`).
#[derive(Debug, Clone)]
pub struct Callback {
    pub url: String,
    pub key_id: Option<String>,
}

/// Attempts of one delivery before it is given up (an admin may still re-send it).
pub const MAX_ATTEMPTS: u32 = 8;
/// How long one attempt may take (a receiver should answer fast and work later).
pub const TIMEOUT_MS: u64 = 5_000;
/// The longest `callback_url` accepted.
pub const MAX_URL_CHARS: usize = 2048;
/// The secrets' prefix, as the specification's libraries expect it.
pub const SECRET_PREFIX: &str = "whsec_";

/// A new signing secret from 24 random bytes: `whsec_` and their base64.
pub fn new_secret(random: &[u8; 24]) -> String {
    format!(
        "{SECRET_PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(random)
    )
}

/// The key bytes of a `whsec_…` secret (`None` if it is not base64).
pub fn secret_key(secret: &str) -> Option<Vec<u8>> {
    let b64 = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    base64::engine::general_purpose::STANDARD.decode(b64).ok()
}

/// `webhook-signature` for one attempt: `v1,<base64 HMAC-SHA256(key, "{id}.{ts}.{body}")>`.
pub fn signature(key: &[u8], id: &str, timestamp_s: i64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any size");
    mac.update(format!("{id}.{timestamp_s}.{body}").as_bytes());
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

/// The delay before attempt `n + 1` after `n` failed ones: `base · 4^(n−1)`, at most 12 hours
/// (production base 30 s: 30 s, 2 min, 8 min, 32 min, 2 h 8 min, 8 h 32 min, 12 h).
pub fn retry_delay_s(base_s: u32, failed: u32) -> u32 {
    let exp = failed.saturating_sub(1).min(15);
    base_s
        .saturating_mul(4u32.saturating_pow(exp))
        .min(12 * 3600)
}

/// What follows an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Delivered,
    RetryIn { s: u32 },
    GiveUp,
}

/// After attempt `n` (1 for the first) answered `status` (`None`: no answer — a network error
/// or the timeout): a 2xx delivers; anything else is retried until [`MAX_ATTEMPTS`].
pub fn after_attempt(status: Option<u16>, n: u32, base_s: u32) -> Next {
    match status {
        Some(s) if (200..300).contains(&s) => Next::Delivered,
        _ if n >= MAX_ATTEMPTS => Next::GiveUp,
        _ => Next::RetryIn {
            s: retry_delay_s(base_s, n),
        },
    }
}

/// Checks a `callback_url`: `https` to a public host — no credentials, no IP literal of a
/// private, loopback or link-local range, no `localhost` or single-label name. `loopback`
/// (local stacks only) also lets `http://127.0.0.1:…` and `http://localhost:…` through, for a
/// receiver on the same machine. Answers the URL as given, trimmed.
///
/// The parser is deliberately narrow (and small: a general URL crate with its IDNA tables
/// costs the Worker's bundle about 100 KiB): ASCII only (an internationalized host is sent in
/// its `xn--` form), `scheme://host[:port][/…]`, a host of letters, digits, `-` and `.`, or a
/// dotted-quad IPv4 or bracketed IPv6 literal; anything else is refused.
pub fn check_url(raw: &str, loopback: bool) -> Result<String, ApiError> {
    let bad = |why: &str| {
        ApiError::bad_request(
            "invalid_callback_url",
            format!("callback_url {why}"),
            Some("callback_url"),
        )
    };
    let raw = raw.trim();
    if raw.is_empty() || raw.len() > MAX_URL_CHARS {
        return Err(bad(&format!("must be 1 to {MAX_URL_CHARS} characters")));
    }
    if !raw.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad(
            "must be ASCII without spaces (an international host in its xn-- form)",
        ));
    }
    let (scheme, rest) = raw
        .split_once("://")
        .ok_or_else(|| bad("is not a URL (scheme://host/…)"))?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(bad("must not carry credentials"));
    }
    let host = parse_host(authority).ok_or_else(|| bad("has no valid host"))?;
    let local = match &host {
        Host::Domain(d) => d == "localhost",
        Host::V4(ip) => ip.is_loopback(),
        Host::V6(ip) => ip.is_loopback(),
    };
    if loopback && local && matches!(scheme.as_str(), "http" | "https") {
        return Ok(raw.to_owned());
    }
    if scheme != "https" {
        return Err(bad("must be https"));
    }
    let public = match host {
        Host::Domain(d) => {
            d.contains('.')
                && ![
                    "localhost",
                    ".local",
                    ".internal",
                    ".localhost",
                    ".home.arpa",
                ]
                .iter()
                .any(|s| d == s.trim_start_matches('.') || d.ends_with(s))
        }
        Host::V4(ip) => {
            !(ip.is_private()
                || ip.is_loopback()
                || ip.is_link_local()
                || ip.is_unspecified()
                || ip.is_broadcast()
                || ip.is_documentation()
                || ip.octets()[0] == 100 && (ip.octets()[1] & 0xc0) == 64)
        }
        Host::V6(ip) => {
            let seg = ip.segments();
            !(ip.is_loopback()
                || ip.is_unspecified()
                || (seg[0] & 0xfe00) == 0xfc00
                || (seg[0] & 0xffc0) == 0xfe80
                || ip.to_ipv4_mapped().is_some())
        }
    };
    if !public {
        return Err(bad("must name a public host"));
    }
    Ok(raw.to_owned())
}

enum Host {
    Domain(String),
    V4(std::net::Ipv4Addr),
    V6(std::net::Ipv6Addr),
}

/// The host of `host[:port]` (`[v6]:port` for IPv6). A name made only of digits and dots must
/// be a dotted quad (no `2130706433`, no `127.1`: fetch would read them as addresses).
fn parse_host(authority: &str) -> Option<Host> {
    let port_ok =
        |p: &str| p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|n| n > 0);
    if let Some(v6) = authority.strip_prefix('[') {
        let (ip, after) = v6.split_once(']')?;
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(port_ok)) {
            return None;
        }
        return ip.parse().ok().map(Host::V6);
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    };
    if port.is_some_and(|p| !port_ok(p)) {
        return None;
    }
    let host = host.to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(&host).to_owned();
    if host.is_empty() || host.len() > 253 {
        return None;
    }
    let numeric = host.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || host.starts_with("0x")
        || host
            .split('.')
            .next_back()
            .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()));
    if numeric {
        return host.parse().ok().map(Host::V4);
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    host.split('.').all(label_ok).then_some(Host::Domain(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_matches_the_specifications_example() {
        // The Standard Webhooks reference libraries' test vector.
        let key = secret_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            signature(&key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn secrets_are_prefixed_base64_of_their_bytes() {
        let s = new_secret(&[7u8; 24]);
        assert!(s.starts_with("whsec_"));
        assert_eq!(secret_key(&s).unwrap(), vec![7u8; 24]);
        assert_eq!(secret_key("whsec_not base64!"), None);
    }

    #[test]
    fn retries_back_off_and_stop() {
        let delays: Vec<u32> = (1..MAX_ATTEMPTS).map(|n| retry_delay_s(30, n)).collect();
        assert_eq!(delays, [30, 120, 480, 1920, 7680, 30720, 43200]);
        assert_eq!(after_attempt(Some(204), 1, 30), Next::Delivered);
        assert_eq!(after_attempt(Some(500), 1, 30), Next::RetryIn { s: 30 });
        assert_eq!(after_attempt(None, 2, 30), Next::RetryIn { s: 120 });
        assert_eq!(after_attempt(Some(410), MAX_ATTEMPTS, 30), Next::GiveUp);
        assert_eq!(after_attempt(Some(200), MAX_ATTEMPTS, 30), Next::Delivered);
    }

    #[test]
    fn only_public_https_urls_pass_and_loopback_only_locally() {
        for ok in [
            "https://hooks.example.com/claude",
            "https://example.com:8443/x?y=1",
            "https://8.8.8.8/hook",
            "https://xn--bcher-kva.example/x",
            "https://[2606:4700::1111]:443/x",
            "HTTPS://Hooks.Example.com./x",
        ] {
            assert_eq!(check_url(ok, false).unwrap(), ok);
        }
        for bad in [
            "http://hooks.example.com/x",
            "ftp://example.com/x",
            "https://user:pw@example.com/x",
            "https://localhost/x",
            "https://127.0.0.1/x",
            "https://10.0.0.5/x",
            "https://192.168.1.1/x",
            "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/x",
            "https://[::1]/x",
            "https://[fd00::1]/x",
            "https://[::ffff:10.0.0.1]/x",
            "https://intranet/x",
            "https://printer.local/x",
            "not a url",
            "",
            "https://2130706433/x",
            "https://127.1/x",
            "https://0x7f.0.0.1/x",
            "https://exa mple.com/x",
            "https://bücher.example/x",
            "https://example.com:99999/x",
            "https://-bad-.example.com/x",
        ] {
            let e = check_url(bad, false).unwrap_err();
            assert_eq!(e.status, 400, "{bad}");
            assert_eq!(e.body.field.as_deref(), Some("callback_url"), "{bad}");
        }
        assert!(check_url("http://127.0.0.1:9000/hook", true).is_ok());
        assert!(check_url("http://localhost:9000/hook", true).is_ok());
        assert!(check_url("http://127.0.0.1:9000/hook", false).is_err());
        assert!(
            check_url("http://10.0.0.5/hook", true).is_err(),
            "only loopback"
        );
        assert!(check_url(&format!("https://e.com/{}", "a".repeat(2048)), false).is_err());
    }
}
