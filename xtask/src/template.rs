//! Migrated template states: a fresh stack's D1 starts as a copy of a state directory that was
//! migrated once, instead of running `wrangler d1 migrations apply` (a Node process and every
//! migration, seconds each time) for every suite's stack.
//!
//! A template is keyed by what decides its content: the migrations (names and text) and the
//! `[[d1_databases]]` of each config (Miniflare names the database file after the database's
//! id, so a cell's database is another file). Anything else in the configs — vars, the
//! simulator's URL, ports — does not reach the database file, so suites with different
//! settings share a template. Two processes asking for the same template at once: the first
//! makes it under a file lock, the second waits for the lock and copies the result.

use std::fs::File;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::paths::{root, target_dir};
use crate::proc::run;
use crate::proc::wrangler;
use crate::{step, Result};

/// Makes `persist` (which must not exist yet) a migrated state for `configs`: a copy of the
/// matching template, made first if it is missing. Answers whether the template was made now.
pub fn migrated_copy(configs: &[PathBuf], persist: &Path) -> Result<bool> {
    let dir = target_dir()
        .join("e2e-templates")
        .join(format!("{:016x}", key(configs)?));
    std::fs::create_dir_all(&dir)?;
    let lock = File::create(dir.join(".lock"))?;
    lock.lock()
        .map_err(|e| format!("locking the template {dir:?}: {e}"))?;
    let state = dir.join("state");
    let made = !dir.join(".ready").exists();
    if made {
        make(configs, &dir, &state)?;
    }
    copy_dir(&state, persist).map_err(|e| format!("copying the template {state:?}: {e}"))?;
    drop(lock);
    Ok(made)
}

/// Applies every migration into `<dir>/state` (through the suite's own configs, whose
/// databases are the template's), then marks the template ready.
fn make(configs: &[PathBuf], dir: &Path, state: &Path) -> Result<()> {
    step(&format!(
        "making the migrated template state {}",
        dir.display()
    ));
    let _ = std::fs::remove_dir_all(state);
    for c in configs {
        apply_migrations(c, state)?;
    }
    File::create(dir.join(".ready"))?;
    Ok(())
}

/// `wrangler d1 migrations apply DB --local` into `persist`, with `config`.
pub fn apply_migrations(config: &Path, persist: &Path) -> Result<()> {
    run(
        wrangler(Some(config))
            .args(["d1", "migrations", "apply", "DB", "--local", "--persist-to"])
            .arg(persist)
            .stdout(Stdio::null()),
        "wrangler d1 migrations apply",
    )
}

/// What decides a template's content: the migrations, and the databases of each config.
fn key(configs: &[PathBuf]) -> Result<u64> {
    let mut h = DefaultHasher::new();
    let migrations = root().join("migrations");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&migrations)
        .map_err(|e| format!("reading {migrations:?}: {e}"))?
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for f in files {
        f.file_name().hash(&mut h);
        std::fs::read(&f)?.hash(&mut h);
    }
    for c in configs {
        let text = std::fs::read_to_string(c).map_err(|e| format!("reading {c:?}: {e}"))?;
        let table: toml::Table = text.parse().map_err(|e| format!("{c:?}: {e}"))?;
        table
            .get("d1_databases")
            .map(toml::Value::to_string)
            .hash(&mut h);
    }
    Ok(h.finish())
}

/// Copies the directory tree `from` to `to` (files and folders only: a state has no links).
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dir: &Path, name: &str, db_id: &str, var: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                "name = \"w\"\n[vars]\nX = \"{var}\"\n\n[[d1_databases]]\nbinding = \"DB\"\ndatabase_id = \"{db_id}\"\n"
            ),
        )
        .unwrap();
        path
    }

    #[test]
    fn configs_that_differ_only_in_vars_share_a_template_and_another_database_does_not() {
        let dir = std::env::temp_dir().join(format!("template-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = config(&dir, "a.toml", "db-1", "one");
        let b = config(&dir, "b.toml", "db-1", "two");
        let c = config(&dir, "c.toml", "db-2", "one");
        let one = |p: &PathBuf| key(std::slice::from_ref(p)).unwrap();
        assert_eq!(one(&a), one(&b));
        assert_ne!(one(&a), one(&c));
        assert_ne!(one(&a), key(&[a, c]).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_copied_tree_has_every_file_of_the_original() {
        let dir = std::env::temp_dir().join(format!("template-copy-{}", std::process::id()));
        let from = dir.join("from");
        std::fs::create_dir_all(from.join("v3/d1")).unwrap();
        std::fs::write(from.join("v3/d1/db.sqlite"), b"sqlite").unwrap();
        std::fs::write(from.join("top"), b"t").unwrap();
        copy_dir(&from, &dir.join("to")).unwrap();
        assert_eq!(
            std::fs::read(dir.join("to/v3/d1/db.sqlite")).unwrap(),
            b"sqlite"
        );
        assert_eq!(std::fs::read(dir.join("to/top")).unwrap(), b"t");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
