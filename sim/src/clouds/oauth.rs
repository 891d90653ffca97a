//! `POST /token`: Google's OAuth 2.0 token endpoint for service accounts
//! (developers.google.com/identity/protocols/oauth2/service-account): a form with
//! `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and a JWT `assertion` signed RS256
//! by the account's key, whose `iss` is the account, `aud` the token endpoint, and `iat`/`exp`
//! at most an hour apart around now — answered with an access token for an hour, or Google's
//! `{"error": "invalid_grant", "error_description": …}`.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde::Deserialize;
use serde_json::json;

use crate::config::CloudCredentials;
use crate::errors::new_id;
use crate::state::Sim;

/// How long a minted token lasts, in seconds (Google answers 3599).
pub const TOKEN_S: i64 = 3_599;
/// Clock skew allowed on `iat` and `exp`.
const SKEW_S: i64 = 300;

#[derive(Deserialize)]
struct Claims {
    iss: String,
    aud: String,
    iat: i64,
    exp: i64,
    #[serde(default)]
    scope: String,
}

fn refused(error: &str, description: &str) -> Response {
    let body = json!({"error": error, "error_description": description});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// `POST /token`.
pub async fn token(State(sim): State<Sim>, body: Bytes) -> Response {
    let form: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let field = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if field("grant_type") != Some(pipeline::provider::google::GRANT_TYPE) {
        sim.lock().stats.call("token", 400);
        return refused("unsupported_grant_type", "Invalid grant_type: ");
    }
    let now_s = crate::clock::now_ms() / 1000;
    if let Err((error, why)) = check(&sim.config.clouds, field("assertion").unwrap_or(""), now_s) {
        sim.lock().stats.call("token", 400);
        return refused(error, why);
    }
    let token = format!("ya29.sim-{}", new_id("tok"));
    let mut inner = sim.lock();
    inner
        .issued_tokens
        .insert(token.clone(), (now_s + TOKEN_S) * 1000);
    inner.stats.call("token", 200);
    Json(json!({"access_token": token, "expires_in": TOKEN_S, "token_type": "Bearer"}))
        .into_response()
}

/// Checks the JWT: three parts, RS256, signed by the account's key, the account's claims.
fn check(
    creds: &CloudCredentials,
    jwt: &str,
    now_s: i64,
) -> Result<(), (&'static str, &'static str)> {
    let malformed = ("invalid_grant", "Invalid JWT: the assertion is not a JWT.");
    let mut parts = jwt.split('.');
    let (Some(h), Some(c), Some(sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(malformed);
    };
    let decode = |s: &str| URL_SAFE_NO_PAD.decode(s).map_err(|_| malformed);
    let header: serde_json::Value = serde_json::from_slice(&decode(h)?).map_err(|_| malformed)?;
    if header["alg"] != "RS256" {
        return Err(("invalid_grant", "Invalid JWT: the algorithm must be RS256."));
    }
    let signed = &jwt[..h.len() + 1 + c.len()];
    if !verify(&creds.service_account_key, signed.as_bytes(), &decode(sig)?) {
        return Err(("invalid_grant", "Invalid JWT Signature."));
    }
    let claims: Claims = serde_json::from_slice(&decode(c)?).map_err(|_| malformed)?;
    if claims.iss != creds.service_account_email {
        return Err((
            "invalid_grant",
            "Invalid JWT: the issuer is not a known service account.",
        ));
    }
    if !claims.aud.ends_with("/token") || !claims.scope.contains("cloud-platform") {
        return Err((
            "invalid_grant",
            "Invalid JWT: the audience or the scope is wrong.",
        ));
    }
    let fresh = claims.iat <= now_s + SKEW_S
        && claims.exp >= now_s - SKEW_S
        && claims.exp - claims.iat <= 3_600;
    if !fresh {
        return Err((
            "invalid_grant",
            "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable \
             timeframe. Check your iat and exp values in the JWT claim.",
        ));
    }
    Ok(())
}

/// RSASSA-PKCS1-v1_5 with SHA-256, by the public half of `key_pem` (PKCS #8).
fn verify(key_pem: &str, message: &[u8], signature: &[u8]) -> bool {
    let body: String = key_pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let Ok(der) = STANDARD.decode(body) else {
        return false;
    };
    let Ok(pair) = ring::rsa::KeyPair::from_pkcs8(&der) else {
        return false;
    };
    let public = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        pair.public().as_ref(),
    );
    public.verify(message, signature).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipeline::provider::google::ServiceAccount;

    fn sign(input: &str, key_pem: &str) -> Vec<u8> {
        let sa = ServiceAccount {
            client_email: String::new(),
            private_key: key_pem.into(),
            private_key_id: None,
            token_uri: String::new(),
        };
        let pair = ring::rsa::KeyPair::from_pkcs8(&sa.key_der().unwrap()).unwrap();
        let mut sig = vec![0; pair.public().modulus_len()];
        pair.sign(
            &ring::signature::RSA_PKCS1_SHA256,
            &ring::rand::SystemRandom::new(),
            input.as_bytes(),
            &mut sig,
        )
        .unwrap();
        sig
    }

    fn account(now_ms: i64) -> (CloudCredentials, String) {
        let creds = CloudCredentials::default();
        let json = crate::config::sim_service_account_json("http://sim");
        let sa = ServiceAccount::parse(&json).unwrap();
        (creds, sa.signing_input(now_ms))
    }

    #[test]
    fn a_jwt_signed_by_the_account_is_let_in_and_a_forged_or_stale_one_refused() {
        let now = 1_800_000_000_000;
        let (creds, input) = account(now);
        let good = format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(sign(&input, &creds.service_account_key))
        );
        assert_eq!(check(&creds, &good, now / 1000), Ok(()));
        let mut forged = sign(&input, &creds.service_account_key);
        forged[10] ^= 1;
        let forged = format!("{input}.{}", URL_SAFE_NO_PAD.encode(forged));
        assert_eq!(
            check(&creds, &forged, now / 1000).unwrap_err().1,
            "Invalid JWT Signature."
        );
        let stale = check(&creds, &good, now / 1000 + 7_200).unwrap_err();
        assert!(stale.1.contains("short-lived"), "{stale:?}");
        assert!(check(&creds, "a.b", now / 1000).is_err());
    }
}
