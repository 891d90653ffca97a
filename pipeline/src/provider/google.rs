//! A Vertex AI access token from a service account's key (issue 36): Google's OAuth 2.0 for
//! server-to-server applications (developers.google.com/identity/protocols/oauth2/service-account,
//! "Preparing to make an authorized API call"): a JWT whose header is `{"alg":"RS256","typ":"JWT"}`,
//! whose claims are `iss` (the account's email), `scope`, `aud` (the key's `token_uri`), `iat` and
//! `exp` (at most an hour later), signed with RSA SHA-256 with the key's private key, and
//! exchanged at `token_uri` with `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` for an
//! access token that lasts `expires_in` seconds.
//!
//! Pure: the Worker signs with the runtime's Web Crypto (`RSASSA-PKCS1-v1_5`, SHA-256) and
//! posts the body; this module builds what is signed and sent, and reads the answer.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde::Deserialize;
use serde_json::json;

/// What a token for Vertex AI is asked for.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// The grant of a signed JWT.
pub const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// A JWT's lifetime: Google accepts at most an hour.
pub const ASSERTION_S: i64 = 3_600;
/// A token is minted again this long before it expires.
pub const REFRESH_BEFORE_MS: i64 = 5 * 60 * 1000;

/// The fields of a service account's JSON key the token needs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ServiceAccount {
    pub client_email: String,
    /// PEM, PKCS #8.
    pub private_key: String,
    #[serde(default)]
    pub private_key_id: Option<String>,
    #[serde(default = "default_token_uri")]
    pub token_uri: String,
}

fn default_token_uri() -> String {
    "https://oauth2.googleapis.com/token".into()
}

impl ServiceAccount {
    /// Reads a JSON key (what `gcloud iam service-accounts keys create` writes).
    pub fn parse(json: &str) -> Result<ServiceAccount, String> {
        let sa: ServiceAccount =
            serde_json::from_str(json).map_err(|e| format!("not a service account key: {e}"))?;
        sa.key_der()?;
        Ok(sa)
    }

    /// The private key as DER (what Web Crypto imports as `pkcs8`).
    pub fn key_der(&self) -> Result<Vec<u8>, String> {
        let body: String = self
            .private_key
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("-----"))
            .collect();
        if !self.private_key.contains("-----BEGIN PRIVATE KEY-----") {
            return Err("private_key is not a PKCS #8 PEM key".into());
        }
        STANDARD
            .decode(body)
            .map_err(|e| format!("private_key is not base64: {e}"))
    }

    /// The JWT's header and claims, base64url-encoded and joined: what is signed.
    pub fn signing_input(&self, now_ms: i64) -> String {
        let iat = now_ms.div_euclid(1000);
        let mut header = json!({"alg": "RS256", "typ": "JWT"});
        if let Some(kid) = &self.private_key_id {
            header["kid"] = kid.as_str().into();
        }
        let claims = json!({
            "iss": self.client_email,
            "scope": SCOPE,
            "aud": self.token_uri,
            "iat": iat,
            "exp": iat + ASSERTION_S,
        });
        format!("{}.{}", b64(&header), b64(&claims))
    }
}

fn b64(v: &serde_json::Value) -> String {
    URL_SAFE_NO_PAD.encode(v.to_string())
}

/// The token request's form body for a signed input and its signature.
pub fn token_request(signing_input: &str, signature: &[u8]) -> String {
    let assertion = format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature));
    form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", GRANT_TYPE)
        .append_pair("assertion", &assertion)
        .finish()
}

/// Google's answer with a token.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TokenAnswer {
    pub access_token: String,
    pub expires_in: i64,
}

impl TokenAnswer {
    /// Until when the token is used (epoch ms): its life less [`REFRESH_BEFORE_MS`].
    pub fn use_until(&self, now_ms: i64) -> i64 {
        now_ms + self.expires_in * 1000 - REFRESH_BEFORE_MS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account() -> ServiceAccount {
        ServiceAccount {
            client_email: "pipeline@acme.iam.gserviceaccount.com".into(),
            private_key: "-----BEGIN PRIVATE KEY-----\nAAEC\n-----END PRIVATE KEY-----\n".into(),
            private_key_id: Some("k1".into()),
            token_uri: default_token_uri(),
        }
    }

    #[test]
    fn the_assertion_carries_googles_claims() {
        let input = account().signing_input(1_700_000_000_500);
        let (h, c) = input.split_once('.').unwrap();
        let h: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(h).unwrap()).unwrap();
        let c: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(c).unwrap()).unwrap();
        assert_eq!(
            (h["alg"].as_str(), h["kid"].as_str()),
            (Some("RS256"), Some("k1"))
        );
        assert_eq!(c["aud"], "https://oauth2.googleapis.com/token");
        assert_eq!(c["scope"], SCOPE);
        assert_eq!(c["iat"], 1_700_000_000);
        assert_eq!(c["exp"], 1_700_003_600);
        let body = token_request(&input, &[1, 2, 3]);
        assert!(body.starts_with(
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="
        ));
        assert!(body.ends_with(".AQID"), "{body}");
    }

    #[test]
    fn a_key_file_is_read_and_a_bad_one_refused() {
        assert_eq!(account().key_der().unwrap(), vec![0, 1, 2]);
        let json = r#"{"type":"service_account","client_email":"a@b","private_key":"-----BEGIN PRIVATE KEY-----\nAAEC\n-----END PRIVATE KEY-----\n","token_uri":"http://127.0.0.1:1/token"}"#;
        let sa = ServiceAccount::parse(json).unwrap();
        assert_eq!(sa.token_uri, "http://127.0.0.1:1/token");
        assert!(
            ServiceAccount::parse(r#"{"client_email":"a@b","private_key":"ssh-rsa AAAA"}"#)
                .is_err()
        );
        assert!(ServiceAccount::parse("{}").is_err());
        let answer = TokenAnswer {
            access_token: "t".into(),
            expires_in: 3_599,
        };
        assert_eq!(answer.use_until(0), 3_599_000 - REFRESH_BEFORE_MS);
    }
}
