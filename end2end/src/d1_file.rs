//! A test's reads of a running stack's D1, straight from the SQLite file the local runtime keeps
//! it in (`<persist>/v3/d1/miniflare-D1DatabaseObject/<id>.sqlite`, in WAL mode), on a read-only
//! connection.
//!
//! Why not `wrangler d1 execute`: that is a second runtime opening the same file, about 1.5 s of
//! CPU per read on these machines, and while it holds the database the Worker's own D1 calls
//! fail with `SQLITE_BUSY` (seen in the races suite's log on 2026-12-04: a consumer's job
//! retried for it) — the harness disturbing what it measures. A read-only reader of a WAL
//! database blocks no writer.
//!
//! Only plain reads come here: a statement that writes, and `EXPLAIN` (whose plan must be the
//! runtime's own SQLite's), go through wrangler as before; so does a state with more than one
//! database (cells), whose files are named by ids this side does not compute.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};

/// The stack's one D1 database file, if it has exactly one.
pub fn database(persist: &Path) -> Option<PathBuf> {
    let dir = persist.join("v3/d1/miniflare-D1DatabaseObject");
    let mut files = std::fs::read_dir(dir).ok()?.filter_map(|e| {
        let path = e.ok()?.path();
        let name = path.file_name()?.to_str()?;
        (name.ends_with(".sqlite") && name != "metadata.sqlite").then_some(path)
    });
    let one = files.next()?;
    files.next().is_none().then_some(one)
}

/// The rows of `sql` read from `file`, each an object of column → value (as `wrangler d1
/// execute --json` answers them); `Ok(None)` when `sql` is not a plain read.
pub fn read(file: &Path, sql: &str) -> Result<Option<Vec<Value>>, String> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(file, flags).map_err(|e| e.to_string())?;
    // A reader waits out the moments the runtime's checkpoint holds the WAL index.
    conn.busy_timeout(Duration::from_secs(10))
        .map_err(|e| e.to_string())?;
    let mut stmt = conn.prepare(sql).map_err(|e| format!("{e}: {sql}"))?;
    if !stmt.readonly() || stmt.is_explain() != 0 {
        return Ok(None);
    }
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
        let file = d.join("ab12.sqlite");
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
    fn reads_rows_as_wrangler_answers_them_and_leaves_writes_and_plans_alone() {
        let dir = std::env::temp_dir().join(format!("d1-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let file = db(&dir);
        assert_eq!(
            database(&dir),
            Some(file.clone()),
            "metadata.sqlite is not D1's"
        );

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

        let d = dir.join("v3/d1/miniflare-D1DatabaseObject");
        Connection::open(d.join("cd34.sqlite")).unwrap();
        assert_eq!(
            database(&dir),
            None,
            "two databases: not ours to tell apart"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
