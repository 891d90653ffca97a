//! What open mode (`AUTH_MODE=open`: no keys, every caller an admin) allows, so that it can only
//! ever be the local stack it is meant for:
//! - **loopback hosts only.** A Worker deployed with `AUTH_MODE=open` by mistake answers every
//!   request 503 saying why, instead of making every anonymous caller an admin who can mint
//!   keys that outlive the mistake;
//! - **no cross-site writes.** A web page the developer visits could post to
//!   `http://127.0.0.1:8787` (a form, or `fetch` with a "simple" content type). So a
//!   state-changing request must be JSON (which a page can only send cross-site after a CORS
//!   preflight this Worker never grants) or carry the [`CLIENT_HEADER`] (which no form can set),
//!   and one whose `Origin` or `Sec-Fetch-Site` says it comes from another site is refused
//!   whatever it carries.
//!
//! Keys mode needs neither rule: a bearer key is never sent by the browser on its own.

use crate::error::ApiError;

/// The header that marks a request as sent by a client, not a page: the SPA and the test
/// client always send it; `curl` users add `-H 'X-Requested-With: curl'` for a multipart upload
/// or a body-less `POST` in open mode.
pub const CLIENT_HEADER: &str = "x-requested-with";

/// What the guard needs to know of a request.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestFacts<'a> {
    pub method: &'a str,
    /// The host the request was addressed to (the URL's, else the `Host` header), no port.
    pub host: &'a str,
    pub content_type: Option<&'a str>,
    pub client_header: bool,
    pub origin: Option<&'a str>,
    pub sec_fetch_site: Option<&'a str>,
}

/// `localhost`, `*.localhost`, `127.0.0.0/8` and `::1` (bracketed or not).
pub fn is_loopback(host: &str) -> bool {
    let h = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if h == "localhost" || h.ends_with(".localhost") || h == "::1" {
        return true;
    }
    match h.parse::<std::net::Ipv4Addr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => false,
    }
}

/// The host of an authority (`127.0.0.1:8787` → `127.0.0.1`, `[::1]:8787` → `::1`).
pub fn host_of(authority: &str) -> &str {
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split_once(']').map_or(v6, |(h, _)| h);
    }
    authority.split(':').next().unwrap_or(authority)
}

/// The host of an origin (`http://127.0.0.1:8787` → `127.0.0.1`), if it has one.
fn origin_host(origin: &str) -> Option<&str> {
    let rest = origin.split_once("://")?.1;
    Some(host_of(rest.split('/').next()?))
}

/// Whether an open-mode request may go on: `Ok`, or the 503 / 403 that refuses it.
pub fn check(r: &RequestFacts<'_>) -> Result<(), ApiError> {
    if !is_loopback(r.host) {
        return Err(ApiError::new(
            503,
            "open_mode_not_local",
            format!(
                "this Worker runs with AUTH_MODE=open, which serves loopback hosts only, and was \
                 reached as {:?}; set AUTH_MODE=keys (the production default) and redeploy",
                r.host
            ),
            None,
        ));
    }
    if matches!(r.method, "GET" | "HEAD" | "OPTIONS") {
        return Ok(());
    }
    let cross_site = |why: &str| {
        ApiError::forbidden(format!(
            "a cross-site request may not change anything on an open-mode stack ({why})"
        ))
    };
    if let Some(site) = r.sec_fetch_site {
        if !matches!(site, "same-origin" | "none") {
            return Err(cross_site(&format!("Sec-Fetch-Site: {site}")));
        }
    }
    if let Some(origin) = r.origin {
        let same = origin_host(origin).is_some_and(is_loopback);
        if !same {
            return Err(cross_site(&format!("Origin: {origin}")));
        }
    }
    let json = r.content_type.is_some_and(|c| {
        c.trim()
            .to_ascii_lowercase()
            .starts_with("application/json")
    });
    if json || r.client_header {
        return Ok(());
    }
    Err(ApiError::forbidden(format!(
        "on an open-mode stack a request that changes something must be JSON or carry the \
         {CLIENT_HEADER} header (any value), so that no web page can send it"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(method: &'static str) -> RequestFacts<'static> {
        RequestFacts {
            method,
            host: "127.0.0.1",
            ..RequestFacts::default()
        }
    }

    #[test]
    fn only_loopback_hosts_are_served() {
        for h in [
            "127.0.0.1",
            "127.9.9.9",
            "localhost",
            "app.localhost",
            "[::1]",
            "::1",
        ] {
            assert!(is_loopback(h), "{h}");
        }
        for h in [
            "claude-pipeline.example.workers.dev",
            "10.0.0.1",
            "0.0.0.0",
            "localhost.evil.com",
            "",
        ] {
            assert!(!is_loopback(h), "{h}");
        }
        let deployed = RequestFacts {
            host: "pipeline.example.workers.dev",
            ..local("GET")
        };
        let e = check(&deployed).unwrap_err();
        assert_eq!(
            (e.status, e.body.code.as_str()),
            (503, "open_mode_not_local")
        );
        assert!(e.body.error.contains("AUTH_MODE=keys"));
    }

    #[test]
    fn reads_need_nothing_and_writes_need_json_or_the_client_header() {
        assert!(check(&local("GET")).is_ok());
        let form = RequestFacts {
            content_type: Some("application/x-www-form-urlencoded"),
            ..local("POST")
        };
        assert_eq!(check(&form).unwrap_err().status, 403);
        assert_eq!(
            check(&local("POST")).unwrap_err().status,
            403,
            "no body, no header"
        );
        let json = RequestFacts {
            content_type: Some("Application/JSON; charset=utf-8"),
            ..local("POST")
        };
        assert!(check(&json).is_ok());
        let upload = RequestFacts {
            content_type: Some("multipart/form-data; boundary=x"),
            client_header: true,
            ..local("POST")
        };
        assert!(check(&upload).is_ok());
    }

    #[test]
    fn a_write_from_another_site_is_refused_whatever_it_carries() {
        let evil = RequestFacts {
            content_type: Some("application/json"),
            client_header: true,
            origin: Some("https://evil.example"),
            ..local("POST")
        };
        assert_eq!(check(&evil).unwrap_err().status, 403);
        let fetched = RequestFacts {
            sec_fetch_site: Some("cross-site"),
            content_type: Some("application/json"),
            ..local("DELETE")
        };
        assert_eq!(check(&fetched).unwrap_err().status, 403);
        let spa = RequestFacts {
            origin: Some("http://127.0.0.1:8787"),
            sec_fetch_site: Some("same-origin"),
            content_type: Some("application/json"),
            ..local("POST")
        };
        assert!(check(&spa).is_ok());
        let v6 = RequestFacts {
            origin: Some("http://[::1]:8787"),
            client_header: true,
            ..local("POST")
        };
        assert!(check(&v6).is_ok());
    }
}
