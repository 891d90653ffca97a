//! Checks an AWS Signature Version 4 the way AWS services do (docs.aws.amazon.com/IAM/latest/
//! UserGuide/reference_sigv-troubleshooting.html and the services' common errors): the request
//! is signed again with the secret of the access key it names, over the headers it says it
//! signed, and the two signatures must match; a key we do not know, a scope for another
//! service, a date more than 15 minutes off or a body whose hash is not the one signed are each
//! refused with AWS's own words.

use axum::http::HeaderMap;
use pipeline::sigv4;

use crate::config::CloudCredentials;

/// How far a request's `x-amz-date` may be from the server's clock.
pub const MAX_SKEW_MS: i64 = 15 * 60 * 1000;

/// A refusal: the status, AWS's error name and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub status: u16,
    pub name: &'static str,
    pub message: String,
}

fn refused(status: u16, name: &'static str, message: impl Into<String>) -> Refused {
    Refused {
        status,
        name,
        message: message.into(),
    }
}

/// The parts of `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`.
struct Authorization<'a> {
    key_id: &'a str,
    day: &'a str,
    region: &'a str,
    service: &'a str,
    signed_headers: Vec<&'a str>,
    signature: &'a str,
}

fn parse(header: &str) -> Option<Authorization<'_>> {
    let rest = header.strip_prefix(sigv4::ALGORITHM)?.trim();
    let mut credential = None;
    let mut signed = None;
    let mut signature = None;
    for part in rest.split(',').map(str::trim) {
        let (k, v) = part.split_once('=')?;
        match k {
            "Credential" => credential = Some(v),
            "SignedHeaders" => signed = Some(v),
            "Signature" => signature = Some(v),
            _ => {}
        }
    }
    let mut scope = credential?.split('/');
    let a = Authorization {
        key_id: scope.next()?,
        day: scope.next()?,
        region: scope.next()?,
        service: scope.next()?,
        signed_headers: signed?.split(';').collect(),
        signature: signature?,
    };
    (scope.next() == Some("aws4_request")).then_some(a)
}

/// A request as it arrived.
pub struct Arrived<'a> {
    pub method: &'a str,
    /// The path as sent (percent-encoded once).
    pub raw_path: &'a str,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
    pub now_ms: i64,
}

/// Checks the request's signature for `service` against `creds`.
pub fn check(req: &Arrived<'_>, creds: &CloudCredentials, service: &str) -> Result<(), Refused> {
    let text = |name: &str| req.headers.get(name).and_then(|v| v.to_str().ok());
    let Some(header) = text("authorization") else {
        return Err(refused(
            403,
            "MissingAuthenticationTokenException",
            "Missing Authentication Token",
        ));
    };
    let a = parse(header).ok_or_else(|| {
        refused(
            400,
            "IncompleteSignatureException",
            format!("Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters. Authorization={header}"),
        )
    })?;
    if a.key_id != creds.aws_access_key_id {
        return Err(refused(
            403,
            "UnrecognizedClientException",
            "The security token included in the request is invalid.",
        ));
    }
    if a.service != service {
        return Err(refused(
            403,
            "InvalidSignatureException",
            format!("Credential should be scoped to correct service: '{service}'."),
        ));
    }
    let amz_date = text("x-amz-date").unwrap_or_default();
    let Some(at) = sigv4::parse_amz_date(amz_date) else {
        return Err(refused(
            400,
            "IncompleteSignatureException",
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
        ));
    };
    if (req.now_ms - at).abs() > MAX_SKEW_MS || !amz_date.starts_with(a.day) {
        return Err(refused(
            403,
            "InvalidSignatureException",
            format!(
                "Signature expired: {amz_date} is now earlier than {} ({} - 15 min.)",
                sigv4::amz_date(req.now_ms - MAX_SKEW_MS),
                sigv4::amz_date(req.now_ms)
            ),
        ));
    }
    let hash = sigv4::Payload::Bytes(req.body).sha256();
    if text("x-amz-content-sha256").is_some_and(|h| h != hash) {
        return Err(refused(
            400,
            "XAmzContentSHA256Mismatch",
            "The provided 'x-amz-content-sha256' header does not match what was computed.",
        ));
    }
    let signed: Vec<(&str, &str)> = a
        .signed_headers
        .iter()
        .map(|&n| (n, text(n).unwrap_or_default()))
        .collect();
    let path = percent_decode(req.raw_path);
    let request = sigv4::Request {
        method: req.method,
        host: text("host").unwrap_or_default(),
        path: &path,
        query: &[],
        headers: &signed,
        payload: sigv4::Payload::Sha256(&hash),
    };
    let (canonical, _) = sigv4::canonical_request(&request, amz_date);
    let scope = sigv4::Scope {
        region: a.region,
        service,
        amz_date,
    };
    if sigv4::signature(&creds.aws_secret_access_key, &scope, &canonical) != a.signature {
        return Err(refused(
            403,
            "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided. \
             Check your AWS Secret Access Key and signing method. Consult the service \
             documentation for details.",
        ));
    }
    Ok(())
}

/// `%XX` escapes decoded (a path's segments as they read).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(creds: &CloudCredentials, path: &str, body: &[u8], at: i64) -> HeaderMap {
        let amz_date = sigv4::amz_date(at);
        let req = sigv4::Request {
            method: "POST",
            host: "bedrock.test",
            path,
            query: &[],
            headers: &[("content-type", "application/json")],
            payload: sigv4::Payload::Bytes(body),
        };
        let scope = sigv4::Scope {
            region: "us-east-1",
            service: "bedrock",
            amz_date: &amz_date,
        };
        let keys = sigv4::Credentials {
            access_key_id: creds.aws_access_key_id.clone(),
            secret_access_key: creds.aws_secret_access_key.clone(),
            session_token: None,
        };
        let s = sigv4::sign(&req, &keys, &scope);
        let mut h = HeaderMap::new();
        h.insert("authorization", s.authorization.parse().unwrap());
        h.insert("x-amz-date", s.amz_date.parse().unwrap());
        h.insert("x-amz-content-sha256", s.content_sha256.parse().unwrap());
        h.insert("host", "bedrock.test".parse().unwrap());
        h.insert("content-type", "application/json".parse().unwrap());
        h
    }

    const PATH: &str = "/model/global.anthropic.claude-opus-4-5-20251101-v1:0/invoke";
    const RAW: &str = "/model/global.anthropic.claude-opus-4-5-20251101-v1%3A0/invoke";

    fn arrived<'a>(headers: &'a HeaderMap, body: &'a [u8], now_ms: i64) -> Arrived<'a> {
        Arrived {
            method: "POST",
            raw_path: RAW,
            headers,
            body,
            now_ms,
        }
    }

    #[test]
    fn a_request_signed_with_the_right_secret_is_let_in() {
        let creds = CloudCredentials::default();
        let h = signed(&creds, PATH, b"{}", 1_000_000_000_000);
        assert_eq!(
            check(&arrived(&h, b"{}", 1_000_000_000_000), &creds, "bedrock"),
            Ok(())
        );
    }

    #[test]
    fn a_wrong_secret_a_changed_body_an_old_date_or_an_unknown_key_is_refused() {
        let creds = CloudCredentials::default();
        let now = 1_000_000_000_000;
        let wrong = CloudCredentials {
            aws_secret_access_key: "not-the-secret".into(),
            ..CloudCredentials::default()
        };
        let h = signed(&wrong, PATH, b"{}", now);
        let e = check(&arrived(&h, b"{}", now), &creds, "bedrock").unwrap_err();
        assert_eq!((e.status, e.name), (403, "InvalidSignatureException"));
        assert!(e
            .message
            .starts_with("The request signature we calculated does not match"));

        let h = signed(&creds, PATH, b"{}", now);
        let e = check(&arrived(&h, b"{\"x\":1}", now), &creds, "bedrock").unwrap_err();
        assert_eq!(e.name, "XAmzContentSHA256Mismatch");

        let e = check(
            &arrived(&h, b"{}", now + MAX_SKEW_MS + 1),
            &creds,
            "bedrock",
        )
        .unwrap_err();
        assert_eq!((e.status, e.name), (403, "InvalidSignatureException"));
        assert!(e.message.starts_with("Signature expired"));

        let stranger = CloudCredentials {
            aws_access_key_id: "AKIDSTRANGER".into(),
            ..CloudCredentials::default()
        };
        let h = signed(&stranger, PATH, b"{}", now);
        let e = check(&arrived(&h, b"{}", now), &creds, "bedrock").unwrap_err();
        assert_eq!((e.status, e.name), (403, "UnrecognizedClientException"));

        let mut h = signed(&creds, PATH, b"{}", now);
        h.remove("authorization");
        let e = check(&arrived(&h, b"{}", now), &creds, "bedrock").unwrap_err();
        assert_eq!(e.status, 403);
    }
}
