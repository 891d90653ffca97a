//! API keys from the command line: a random key is made here, its SHA-256 stored in D1 (local
//! state, or the deployed database with `--remote`), and the key printed once.

use std::io::Read;
use std::path::Path;

use pipeline::identity::{new_key, KeyHash, Role, UserId};

use crate::proc::wrangler;
use crate::Result;

/// 32 bytes from the operating system's CSPRNG.
fn random32() -> Result<[u8; 32]> {
    let mut b = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b)
}

/// Where the key goes: a local stack's config and state, or the deployed database.
pub enum Target<'a> {
    Local { config: &'a Path, persist: &'a Path },
    Remote,
}

/// Creates a key for `user` with `role` and answers it (the only time it exists in clear).
pub fn create(target: Target<'_>, user: &str, role: Role) -> Result<String> {
    let (key, sql) = new_row(user, role)?;
    let mut cmd = match target {
        Target::Local { config, persist } => {
            let mut c = wrangler(Some(config));
            c.args(["d1", "execute", "DB", "--local", "--persist-to"])
                .arg(persist);
            c
        }
        Target::Remote => {
            let mut c = wrangler(None);
            c.args(["d1", "execute", "DB", "--remote"]);
            c
        }
    };
    cmd.args(["--command", &sql])
        .stdout(std::process::Stdio::null());
    crate::proc::run(&mut cmd, "wrangler d1 execute (insert the key)")?;
    Ok(key)
}

/// A new key for `user` with `role`, and the statement that stores its hash.
pub fn new_row(user: &str, role: Role) -> Result<(String, String)> {
    let user = UserId::parse(user).map_err(|e| format!("--user: {e}"))?;
    let key = new_key(&random32()?);
    let id = format!(
        "key_{}",
        pipeline::jobs::new_id(random32()?[..16].try_into()?)
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    // Every value is an id, a hex hash, a validated user id or a fixed word: safe to inline.
    let sql = format!(
        "INSERT INTO api_keys (id, key_hash, user_id, role, created_at) \
         VALUES ('{id}', '{}', '{}', '{}', {now})",
        KeyHash::of(&key).as_str(),
        user.as_str(),
        role.as_str()
    );
    Ok((key, sql))
}
