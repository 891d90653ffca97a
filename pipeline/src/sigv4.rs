//! AWS Signature Version 4, as Amazon Bedrock requires of every call (issue 36, the Bedrock
//! route): the canonical request, the string to sign, the signing key derived from the secret,
//! the date, the region and the service, and the `Authorization` header — following "Create a
//! signed AWS API request" (docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html)
//! and checked against the worked example of the AWS General Reference (`tests`: the IAM
//! `ListUsers` request of 2015-08-30, whose canonical request hashes to `f536975d…` and whose
//! signature is `5d672d79…`).
//!
//! Pure: the caller supplies the time (`YYYYMMDDTHHMMSSZ`), so a signature is reproducible and
//! the simulator can check one by signing the same request again.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// The algorithm's name, first in the string to sign and the `Authorization` header.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// An AWS identity's keys (a session token when they are temporary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

/// What is signed of a request.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub method: &'a str,
    pub host: &'a str,
    /// The path as its segments read, not yet encoded (`/model/anthropic.claude-x-v1:0/invoke`).
    pub path: &'a str,
    /// Query parameters, not yet encoded.
    pub query: &'a [(&'a str, &'a str)],
    /// Headers to sign besides `host` and `x-amz-date` (which are always signed).
    pub headers: &'a [(&'a str, &'a str)],
    pub payload: Payload<'a>,
}

/// The body, or its SHA-256 already computed (a body assembled outside the Worker's memory,
/// hashed where it is).
#[derive(Debug, Clone, Copy)]
pub enum Payload<'a> {
    Bytes(&'a [u8]),
    /// Hex, lower case.
    Sha256(&'a str),
}

impl Payload<'_> {
    /// The hash that is signed and sent as `x-amz-content-sha256`.
    pub fn sha256(&self) -> String {
        match self {
            Payload::Bytes(b) => hex(&Sha256::digest(b)),
            Payload::Sha256(h) => h.to_ascii_lowercase(),
        }
    }
}

/// Where and as what a request is signed.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub region: &'a str,
    pub service: &'a str,
    /// `YYYYMMDDTHHMMSSZ`, UTC: the request's `x-amz-date`.
    pub amz_date: &'a str,
}

/// The headers a signed request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    pub authorization: String,
    pub amz_date: String,
    /// `x-amz-content-sha256`: the body's hash, hex.
    pub content_sha256: String,
    /// `x-amz-security-token`, with temporary credentials.
    pub security_token: Option<String>,
}

/// Signs `req` with `creds` for `scope`.
pub fn sign(req: &Request<'_>, creds: &Credentials, scope: &Scope<'_>) -> Signed {
    let (canonical, signed_headers) = canonical_request(req, scope.amz_date);
    let signature = signature(&creds.secret_access_key, scope, &canonical);
    let day = &scope.amz_date[..scope.amz_date.len().min(8)];
    Signed {
        authorization: format!(
            "{ALGORITHM} Credential={}/{day}/{}/{}/aws4_request, SignedHeaders={signed_headers}, \
             Signature={signature}",
            creds.access_key_id, scope.region, scope.service
        ),
        amz_date: scope.amz_date.to_owned(),
        content_sha256: req.payload.sha256(),
        security_token: creds.session_token.clone(),
    }
}

/// `x-amz-date` for an instant: `YYYYMMDDTHHMMSSZ`, UTC.
pub fn amz_date(epoch_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(epoch_ms)
        .unwrap_or_default()
        .format("%Y%m%dT%H%M%SZ")
        .to_string()
}

/// The instant of an `x-amz-date` (epoch ms), if it is one.
pub fn parse_amz_date(s: &str) -> Option<i64> {
    chrono::NaiveDateTime::parse_from_str(s, "%Y%m%dT%H%M%SZ")
        .ok()
        .map(|t| t.and_utc().timestamp_millis())
}

/// The canonical request, and the names of the headers it signs (`content-type;host;x-amz-date`).
pub fn canonical_request(req: &Request<'_>, amz_date: &str) -> (String, String) {
    let mut headers: Vec<(String, String)> = req
        .headers
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), trim_value(v)))
        .filter(|(n, _)| n != "host" && n != "x-amz-date")
        .collect();
    headers.push(("host".into(), req.host.to_owned()));
    headers.push(("x-amz-date".into(), amz_date.to_owned()));
    headers.sort();
    let signed: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
    let signed = signed.join(";");
    let canonical_headers: String = headers.iter().map(|(n, v)| format!("{n}:{v}\n")).collect();
    let canonical = format!(
        "{}\n{}\n{}\n{canonical_headers}\n{signed}\n{}",
        req.method,
        canonical_uri(req.path),
        canonical_query(req.query),
        req.payload.sha256(),
    );
    (canonical, signed)
}

/// The signature of a canonical request: the string to sign, keyed with the signing key.
pub fn signature(secret: &str, scope: &Scope<'_>, canonical_request: &str) -> String {
    let day = &scope.amz_date[..scope.amz_date.len().min(8)];
    let string_to_sign = format!(
        "{ALGORITHM}\n{}\n{day}/{}/{}/aws4_request\n{}",
        scope.amz_date,
        scope.region,
        scope.service,
        hex(&Sha256::digest(canonical_request.as_bytes()))
    );
    let key = signing_key(secret, day, scope.region, scope.service);
    hex(&hmac(&key, string_to_sign.as_bytes()))
}

/// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request")`.
pub fn signing_key(secret: &str, day: &str, region: &str, service: &str) -> Vec<u8> {
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), day.as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    hmac(&k_service, b"aws4_request")
}

/// The path, each segment URI-encoded twice, as every service but S3 asks ("Each path segment
/// must be URI-encoded twice"): once for the request line, once more for the canonical form.
pub fn canonical_uri(path: &str) -> String {
    if path.is_empty() || path == "/" {
        return "/".into();
    }
    path.split('/')
        .map(|segment| uri_encode(&uri_encode(segment)))
        .collect::<Vec<_>>()
        .join("/")
}

/// The path as the request line sends it: each segment URI-encoded once.
pub fn request_path(path: &str) -> String {
    path.split('/')
        .map(uri_encode)
        .collect::<Vec<_>>()
        .join("/")
}

/// Parameters sorted by name (then value), each name and value URI-encoded.
fn canonical_query(query: &[(&str, &str)]) -> String {
    let mut pairs: Vec<(String, String)> = query
        .iter()
        .map(|(k, v)| (uri_encode(k), uri_encode(v)))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// RFC 3986 encoding as SigV4 has it: every byte but `A-Z a-z 0-9 - _ . ~` as `%XY`, uppercase.
pub fn uri_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A header value with its ends trimmed and inner runs of spaces made one.
fn trim_value(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn amz_dates_read_back() {
        let t = super::amz_date(1_440_938_160_000);
        assert_eq!(t, "20150830T123600Z");
        assert_eq!(super::parse_amz_date(&t), Some(1_440_938_160_000));
        assert_eq!(super::parse_amz_date("2015-08-30"), None);
    }

    use super::*;

    /// The AWS General Reference's worked example: `GET https://iam.amazonaws.com/?Action=
    /// ListUsers&Version=2010-05-08` at 2015-08-30T12:36:00Z, signed with the example keys.
    fn example() -> (Request<'static>, Credentials, Scope<'static>) {
        let req = Request {
            method: "GET",
            host: "iam.amazonaws.com",
            path: "/",
            query: &[("Action", "ListUsers"), ("Version", "2010-05-08")],
            headers: &[(
                "Content-Type",
                "application/x-www-form-urlencoded; charset=utf-8",
            )],
            payload: Payload::Bytes(b""),
        };
        let creds = Credentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        };
        let scope = Scope {
            region: "us-east-1",
            service: "iam",
            amz_date: "20150830T123600Z",
        };
        (req, creds, scope)
    }

    #[test]
    fn the_worked_example_s_canonical_request_hashes_as_published() {
        let (req, _, scope) = example();
        let (canonical, signed) = canonical_request(&req, scope.amz_date);
        assert_eq!(signed, "content-type;host;x-amz-date");
        assert_eq!(
            hex(&Sha256::digest(canonical.as_bytes())),
            "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59"
        );
    }

    #[test]
    fn the_worked_example_is_signed_as_published() {
        let (req, creds, scope) = example();
        let signed = sign(&req, &creds, &scope);
        assert_eq!(
            signed.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, \
             Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
        );
    }

    #[test]
    fn a_model_id_s_colon_is_encoded_once_on_the_wire_and_twice_in_the_canonical_path() {
        let path = "/model/anthropic.claude-x-v1:0/invoke";
        assert_eq!(
            request_path(path),
            "/model/anthropic.claude-x-v1%3A0/invoke"
        );
        assert_eq!(
            canonical_uri(path),
            "/model/anthropic.claude-x-v1%253A0/invoke"
        );
    }

    #[test]
    fn any_change_to_what_is_signed_changes_the_signature() {
        let (req, creds, scope) = example();
        let base = sign(&req, &creds, &scope).authorization;
        let other_body = Request {
            payload: Payload::Bytes(b"{}"),
            ..req
        };
        let other_host = Request {
            host: "bedrock-runtime.us-east-1.amazonaws.com",
            ..req
        };
        let other_secret = Credentials {
            secret_access_key: "another".into(),
            ..creds.clone()
        };
        let other_time = Scope {
            amz_date: "20150830T123601Z",
            ..scope
        };
        for changed in [
            sign(&other_body, &creds, &scope).authorization,
            sign(&other_host, &creds, &scope).authorization,
            sign(&req, &other_secret, &scope).authorization,
            sign(&req, &creds, &other_time).authorization,
        ] {
            assert_ne!(changed, base);
        }
    }
}
