//! A test's statements on a running stack's D1, straight on the SQLite file the local runtime
//! keeps it in (`<persist>/v3/d1/miniflare-D1DatabaseObject/<object id>.sqlite`, in WAL mode).
//!
//! Why not `wrangler d1 execute`: that is a second runtime opening the same file, about 1.5 s of
//! CPU per statement on these machines (a Node process, another Node process and a runtime:
//! 40 % of the CPU the `cells` and `retention` suites used on 2026-12-06), and while it holds the
//! database the Worker's own D1 calls fail with `SQLITE_BUSY` (seen in the races suite's log on
//! 2026-12-04: a consumer's job retried for it) — the harness disturbing what it measures. A
//! read-only reader of a WAL database blocks no writer; a write (a test moving a row's
//! timestamps back) is one short autocommitted statement that waits its turn on SQLite's lock,
//! as the runtime's own writes do.
//!
//! `EXPLAIN` (whose plan must be the runtime's own SQLite's) and several statements at once go
//! through wrangler as before.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hmac::{Hmac, Mac};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The file of the database whose `database_id` is `id`, if the runtime has made it. The
/// runtime keeps a D1 database in a Durable Object named by the id, and names the object's file
/// by the object's id: the first 16 bytes of HMAC-SHA-256(key, name), then the first 16 of
/// HMAC-SHA-256(key, those 16), with key = SHA-256 of the object class's unique key
/// (`miniflare-D1DatabaseObject`) — workerd's `ActorIdFactoryImpl::idFromName`, checked against
/// the files of a running stack (the unit test below holds one such pair).
pub fn database_of(persist: &Path, id: &str) -> Option<PathBuf> {
    let file = persist
        .join("v3/d1/miniflare-D1DatabaseObject")
        .join(format!(
            "{}.sqlite",
            object_id("miniflare-D1DatabaseObject", id)
        ));
    file.exists().then_some(file)
}

fn object_id(unique_key: &str, name: &str) -> String {
    let key = Sha256::digest(unique_key.as_bytes());
    let mac = |data: &[u8]| {
        let mut m = Hmac::<Sha256>::new_from_slice(&key).expect("any key length");
        m.update(data);
        m.finalize().into_bytes()
    };
    let base = mac(name.as_bytes());
    let check = mac(&base[..16]);
    base[..16]
        .iter()
        .chain(&check[..16])
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The rows of `sql` run on `file`, each an object of column → value (as `wrangler d1 execute
/// --json` answers them; none for a write); `Ok(None)` when `sql` is an `EXPLAIN` or more than
/// one statement.
pub fn run(file: &Path, sql: &str) -> Result<Option<Vec<Value>>, String> {
    if let Some(rows) = read(file, sql)? {
        return Ok(Some(rows));
    }
    let conn = open(file, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    let Some(mut stmt) = statement(&conn, sql)? else {
        return Ok(None);
    };
    stmt.raw_execute().map_err(|e| format!("{e}: {sql}"))?;
    Ok(Some(Vec::new()))
}

/// A connection to `file` that waits out the moments another holds the lock (the runtime's
/// checkpoint holds the WAL index; its writes hold the database).
fn open(file: &Path, flags: OpenFlags) -> Result<Connection, String> {
    let conn = Connection::open_with_flags(file, flags).map_err(|e| e.to_string())?;
    conn.busy_timeout(Duration::from_secs(10))
        .map_err(|e| e.to_string())?;
    Ok(conn)
}

/// `sql` prepared on `conn`; `None` when it is an `EXPLAIN` or more than one statement (both
/// left to wrangler).
fn statement<'c>(
    conn: &'c Connection,
    sql: &str,
) -> Result<Option<rusqlite::Statement<'c>>, String> {
    match conn.prepare(sql) {
        Ok(stmt) if stmt.is_explain() != 0 => Ok(None),
        Ok(stmt) => Ok(Some(stmt)),
        Err(rusqlite::Error::MultipleStatement) => Ok(None),
        Err(e) => Err(format!("{e}: {sql}")),
    }
}

/// The rows of `sql` read from `file`, each an object of column → value (as `wrangler d1
/// execute --json` answers them); `Ok(None)` when `sql` is not a plain read.
pub fn read(file: &Path, sql: &str) -> Result<Option<Vec<Value>>, String> {
    let conn = open(
        file,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let Some(mut stmt) = statement(&conn, sql)?.filter(|stmt| stmt.readonly()) else {
        return Ok(None);
    };
    let names: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
    let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| e.to_string())? {
        let mut object = Map::new();
        for (i, name) in names.iter().enumerate() {
            let value = row.get_ref(i).map_err(|e| e.to_string())?;
            object.insert(name.clone(), json(value));
        }
        out.push(Value::Object(object));
    }
    Ok(Some(out))
}

fn json(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => i.into(),
        ValueRef::Real(f) => f.into(),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
        ValueRef::Blob(b) => b.iter().map(|&x| Value::from(x)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(dir: &Path) -> PathBuf {
        let d = dir.join("v3/d1/miniflare-D1DatabaseObject");
        std::fs::create_dir_all(&d).unwrap();
        let file = d.join(format!(
            "{}.sqlite",
            object_id("miniflare-D1DatabaseObject", "db-a")
        ));
        let c = Connection::open(&file).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode=WAL; CREATE TABLE t (a INTEGER, b TEXT, c REAL, d BLOB);
             INSERT INTO t VALUES (1, 'x', 0.5, x'0102'), (NULL, NULL, NULL, NULL);",
        )
        .unwrap();
        Connection::open(d.join("metadata.sqlite")).unwrap();
        file
    }

    #[test]
    fn a_database_file_is_named_as_the_runtime_names_it() {
        // The file wrangler 4.164's runtime made for the suites' database id (2026-12-06).
        assert_eq!(
            object_id(
                "miniflare-D1DatabaseObject",
                "00000000-0000-0000-0000-000000000000"
            ),
            "9ba2b04bf514d9facfd57ed57d849e77241a7adc99d1c1545d06688b43d84248"
        );
    }

    #[test]
    fn writes_run_on_the_file_and_plans_and_several_statements_are_left_to_wrangler() {
        let dir = std::env::temp_dir().join(format!("d1-file-w-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let file = db(&dir);
        assert_eq!(
            run(&file, "UPDATE t SET a = a + 1 WHERE a = 1").unwrap(),
            Some(vec![])
        );
        assert_eq!(
            run(&file, "SELECT a FROM t WHERE a IS NOT NULL").unwrap(),
            Some(vec![serde_json::json!({"a": 2})])
        );
        assert_eq!(
            run(&file, "EXPLAIN QUERY PLAN SELECT * FROM t").unwrap(),
            None
        );
        assert_eq!(
            run(&file, "UPDATE t SET a = 3; UPDATE t SET a = 4").unwrap(),
            None
        );
        assert_eq!(
            run(&file, "SELECT a FROM t WHERE a IS NOT NULL").unwrap(),
            Some(vec![serde_json::json!({"a": 2})]),
            "nothing of a refused batch ran"
        );
        assert!(run(&file, "UPDATE nope SET a = 1").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_rows_as_wrangler_answers_them_and_leaves_writes_and_plans_alone() {
        let dir = std::env::temp_dir().join(format!("d1-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let file = db(&dir);
        assert_eq!(database_of(&dir, "db-a"), Some(file.clone()));

        let rows = read(&file, "SELECT a, b, c, d FROM t ORDER BY a IS NULL")
            .unwrap()
            .unwrap();
        assert_eq!(
            rows,
            vec![
                serde_json::json!({"a": 1, "b": "x", "c": 0.5, "d": [1, 2]}),
                serde_json::json!({"a": null, "b": null, "c": null, "d": null}),
            ]
        );
        assert_eq!(read(&file, "UPDATE t SET a = 2").unwrap(), None);
        assert_eq!(
            read(&file, "EXPLAIN QUERY PLAN SELECT * FROM t").unwrap(),
            None
        );
        assert!(read(&file, "SELECT nope FROM t").is_err());
        assert_eq!(
            database_of(&dir, "db-b"),
            None,
            "no file for a database the runtime has not made"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
