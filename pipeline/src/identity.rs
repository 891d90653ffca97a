//! Who is calling. The Worker has one extractor; it asks [`decide`] what the request headers mean
//! and carries out the answer (a key look-up in D1, or a rejection).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::ApiError;

/// `AUTH_MODE`: `keys` (production default) requires a bearer key; `open` (local demo) lets the
/// `x-user-id` header name the caller and shows the demo banner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AuthMode {
    Open,
    Keys,
}

impl AuthMode {
    /// Anything but an explicit `open` is keys mode: a typo must never disable authentication.
    pub fn from_var(value: Option<&str>) -> AuthMode {
        match value.map(str::trim) {
            Some(v) if v.eq_ignore_ascii_case("open") => AuthMode::Open,
            _ => AuthMode::Keys,
        }
    }
}

/// What a caller may do: users see their own work, admins also the ops pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Admin,
}

impl Role {
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "user" => Some(Role::User),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Admin => "admin",
        }
    }
}

/// A user id: 1–64 characters of `[A-Za-z0-9._@-]`, so it is safe in logs, keys and URLs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct UserId(String);

impl UserId {
    pub const ANONYMOUS: &'static str = "anonymous";

    pub fn parse(s: &str) -> Result<UserId, String> {
        let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '@' | '-');
        if s.is_empty() || s.len() > 64 {
            return Err("user id must be 1 to 64 characters".into());
        }
        if !s.chars().all(ok_char) {
            return Err("user id may contain only letters, digits and . _ @ -".into());
        }
        Ok(UserId(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

reads_as_text!(UserId);

impl TryFrom<String> for UserId {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        UserId::parse(&s)
    }
}

/// A resolved caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub user_id: UserId,
    pub role: Role,
    /// The API key the caller sent, if any: it signs the webhooks of the jobs it submits.
    #[serde(default)]
    pub key_id: Option<String>,
    /// That key's default `callback_url`.
    #[serde(default)]
    pub callback_url: Option<String>,
}

impl Identity {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }

    /// 403 "only admins may `what`" unless the caller is an admin.
    pub fn require_admin(&self, what: &str) -> Result<(), ApiError> {
        if self.is_admin() {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!("only admins may {what}")))
        }
    }
}

/// The SHA-256 of an API key, hex-encoded: the only form in which keys are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHash(String);

impl KeyHash {
    pub fn of(key: &str) -> KeyHash {
        let digest = Sha256::digest(key.as_bytes());
        KeyHash(digest.iter().map(|b| format!("{b:02x}")).collect())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A new API key from 32 random bytes: `cpk_` and 64 hex digits. Shown once; only its
/// [`KeyHash`] is stored.
pub fn new_key(random: &[u8; 32]) -> String {
    let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
    format!("cpk_{hex}")
}

/// `POST /api/keys {"user_id", "role"?}`: who the new key is for.
pub fn parse_key_input(body: &[u8]) -> Result<(UserId, Role), ApiError> {
    let obj = crate::error::json_object(body)?;
    let user = match obj.get("user_id") {
        Some(serde_json::Value::String(s)) => UserId::parse(s.trim()).map_err(|m| {
            ApiError::bad_request("invalid_field", format!("user_id: {m}"), Some("user_id"))
        })?,
        Some(_) => {
            return Err(ApiError::bad_request(
                "invalid_field",
                "user_id must be a string",
                Some("user_id"),
            ))
        }
        None => {
            return Err(ApiError::bad_request(
                "missing_field",
                "user_id is required",
                Some("user_id"),
            ))
        }
    };
    let role = match obj.get("role") {
        None | Some(serde_json::Value::Null) => Role::User,
        Some(serde_json::Value::String(r)) => Role::parse(r).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_field",
                "role must be \"user\" or \"admin\"",
                Some("role"),
            )
        })?,
        Some(_) => {
            return Err(ApiError::bad_request(
                "invalid_field",
                "role must be a string",
                Some("role"),
            ))
        }
    };
    Ok((user, role))
}

/// What the extractor must do with a request's identity headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityDecision {
    /// Identified without a look-up (open mode without a key).
    Resolved(Identity),
    /// A bearer key was sent: look its hash up; a miss or a revoked key is a 401.
    LookUpKey(KeyHash),
    /// Refuse the request with this error.
    Reject(ApiError),
}

/// Decides what the identity headers mean. A bearer key always identifies its owner (in both
/// modes); without one, keys mode refuses and open mode trusts `x-user-id` (default `anonymous`)
/// and lets every caller use the ops pages.
pub fn decide(
    mode: AuthMode,
    authorization: Option<&str>,
    x_user_id: Option<&str>,
) -> IdentityDecision {
    if let Some(value) = authorization {
        let mut parts = value.trim().splitn(2, ' ');
        let scheme = parts.next().unwrap_or_default();
        let key = parts.next().unwrap_or_default().trim();
        if !scheme.eq_ignore_ascii_case("bearer")
            || key.is_empty()
            || key.len() > 256
            || !key.chars().all(|c| c.is_ascii_graphic())
        {
            return IdentityDecision::Reject(ApiError::unauthorized(
                "the Authorization header must be `Bearer <api key>`",
            ));
        }
        return IdentityDecision::LookUpKey(KeyHash::of(key));
    }
    match mode {
        AuthMode::Keys => IdentityDecision::Reject(ApiError::unauthorized(
            "an API key is required: send `Authorization: Bearer <api key>`",
        )),
        AuthMode::Open => {
            let user = x_user_id.map(str::trim).unwrap_or(UserId::ANONYMOUS);
            match UserId::parse(user) {
                Ok(user_id) => IdentityDecision::Resolved(Identity {
                    user_id,
                    role: Role::Admin,
                    key_id: None,
                    callback_url: None,
                }),
                Err(msg) => IdentityDecision::Reject(ApiError::bad_request(
                    "invalid_user_id",
                    format!("x-user-id: {msg}"),
                    Some("x-user-id"),
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_mode_without_a_key_is_unauthorized() {
        match decide(AuthMode::Keys, None, Some("alice")) {
            IdentityDecision::Reject(e) => assert_eq!(e.status, 401),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn open_mode_trusts_x_user_id_and_defaults_to_anonymous() {
        let who = |h| match decide(AuthMode::Open, None, h) {
            IdentityDecision::Resolved(id) => id.user_id.as_str().to_owned(),
            other => panic!("{other:?}"),
        };
        assert_eq!(who(Some("alice")), "alice");
        assert_eq!(who(None), "anonymous");
    }

    #[test]
    fn open_mode_rejects_a_malformed_user_id_naming_the_header() {
        match decide(AuthMode::Open, None, Some("../etc")) {
            IdentityDecision::Reject(e) => {
                assert_eq!(e.status, 400);
                assert_eq!(e.body.field.as_deref(), Some("x-user-id"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bearer_key_is_looked_up_by_its_hash_in_both_modes() {
        for mode in [AuthMode::Open, AuthMode::Keys] {
            assert_eq!(
                decide(mode, Some("Bearer cp_secret"), Some("mallory")),
                IdentityDecision::LookUpKey(KeyHash::of("cp_secret"))
            );
        }
    }

    #[test]
    fn a_malformed_authorization_header_is_unauthorized_even_in_open_mode() {
        for h in ["Basic abc", "Bearer", "Bearer  ", "Bearer a b"] {
            match decide(AuthMode::Open, Some(h), None) {
                IdentityDecision::Reject(e) => assert_eq!(e.status, 401, "{h}"),
                other => panic!("{h}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_key_hash_is_hex_sha256() {
        assert_eq!(
            KeyHash::of("abc").as_str(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn only_an_explicit_open_disables_keys() {
        assert_eq!(AuthMode::from_var(Some("open")), AuthMode::Open);
        assert_eq!(AuthMode::from_var(Some(" OPEN ")), AuthMode::Open);
        assert_eq!(AuthMode::from_var(Some("opne")), AuthMode::Keys);
        assert_eq!(AuthMode::from_var(None), AuthMode::Keys);
    }

    #[test]
    fn user_ids_are_bounded_and_path_safe() {
        assert!(UserId::parse("alice@example.com").is_ok());
        assert!(UserId::parse("").is_err());
        assert!(UserId::parse(&"a".repeat(65)).is_err());
        assert!(UserId::parse("a/b").is_err());
        assert!(UserId::parse("a b").is_err());
    }

    #[test]
    fn a_new_key_is_long_random_looking_and_only_its_hash_is_kept() {
        let k = new_key(&[7u8; 32]);
        assert!(k.starts_with("cpk_"));
        assert_eq!(k.len(), 4 + 64);
        assert_ne!(new_key(&[8u8; 32]), k);
        assert_eq!(KeyHash::of(&k).as_str().len(), 64);
        assert!(matches!(
            decide(AuthMode::Keys, Some(&format!("Bearer {k}")), None),
            IdentityDecision::LookUpKey(_)
        ));
    }

    #[test]
    fn a_key_request_names_a_valid_user_and_role() {
        let (u, r) = parse_key_input(br#"{"user_id":"ana","role":"admin"}"#).unwrap();
        assert_eq!((u.as_str(), r), ("ana", Role::Admin));
        assert_eq!(
            parse_key_input(br#"{"user_id":"bo"}"#).unwrap().1,
            Role::User
        );
        assert_eq!(parse_key_input(br#"{}"#).unwrap_err().status, 400);
        assert_eq!(
            parse_key_input(br#"{"user_id":"a b"}"#).unwrap_err().status,
            400
        );
        assert_eq!(
            parse_key_input(br#"{"user_id":"a","role":"root"}"#)
                .unwrap_err()
                .status,
            400
        );
    }
}
