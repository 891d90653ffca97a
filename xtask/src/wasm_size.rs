//! What makes a wasm binary big: the size of every function body (named from the module's
//! `name` section, demangled), summed by crate, and the data segments — an equivalent of
//! `twiggy top` that needs no tool. Reads the release build before wasm-bindgen and wasm-opt
//! (the one that still has names); wasm-opt shrinks every function, so the shares hold and the
//! absolute figures are the linker's.

use std::collections::HashMap;
use std::path::Path;

use crate::Result;

/// One module's sizes.
#[derive(Debug, Default)]
pub struct Breakdown {
    /// (demangled name, body bytes), largest first.
    pub functions: Vec<(String, usize)>,
    /// Bytes of all function bodies.
    pub code: usize,
    /// Bytes of the data segments (string literals, tables of constants).
    pub data: usize,
    /// The whole file.
    pub file: usize,
}

impl Breakdown {
    /// Code bytes per crate (the first path segment of each function's name), largest first.
    pub fn by_crate(&self) -> Vec<(String, usize, usize)> {
        let mut m: HashMap<String, (usize, usize)> = HashMap::new();
        for (name, size) in &self.functions {
            let e = m.entry(crate_of(name)).or_default();
            e.0 += size;
            e.1 += 1;
        }
        let mut v: Vec<_> = m.into_iter().map(|(k, (s, n))| (k, s, n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }
}

/// The crate a demangled symbol belongs to: `serde_json::de::…` → `serde_json`,
/// `<app::X as core::fmt::Debug>::fmt` → `app` (the implementing type's crate).
pub fn crate_of(name: &str) -> String {
    let s = name.trim_start_matches(['<', '&', '*', ' ']);
    let s = s.strip_prefix("mut ").unwrap_or(s);
    let s = s.strip_prefix("dyn ").unwrap_or(s);
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    match &s[..end] {
        "" => "(unnamed)".into(),
        c => c.to_string(),
    }
}

fn leb(b: &[u8], at: &mut usize) -> Result<u64> {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let byte = *b.get(*at).ok_or("truncated LEB128")?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
        shift += 7;
        if shift > 63 {
            return Err("LEB128 too long".into());
        }
    }
}

fn name(b: &[u8], at: &mut usize) -> Result<String> {
    let n = leb(b, at)? as usize;
    let s = b.get(*at..*at + n).ok_or("truncated name")?;
    *at += n;
    Ok(String::from_utf8_lossy(s).into_owned())
}

fn limits(b: &[u8], at: &mut usize) -> Result<()> {
    let flags = *b.get(*at).ok_or("truncated limits")?;
    *at += 1;
    leb(b, at)?;
    if flags & 1 != 0 {
        leb(b, at)?;
    }
    Ok(())
}

/// Parses the module at `path`.
pub fn breakdown(path: &Path) -> Result<Breakdown> {
    let b = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&b)
}

pub fn parse(b: &[u8]) -> Result<Breakdown> {
    if b.get(..4) != Some(b"\0asm") {
        return Err("not a wasm module".into());
    }
    let mut at = 8;
    let mut imported = 0u64;
    let mut bodies: Vec<usize> = Vec::new();
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut data = 0;
    while at < b.len() {
        let id = b[at];
        at += 1;
        let size = leb(b, &mut at)? as usize;
        let (start, end) = (at, at + size);
        let sec = b.get(start..end).ok_or("truncated section")?;
        let mut p = 0;
        match id {
            2 => {
                for _ in 0..leb(sec, &mut p)? {
                    name(sec, &mut p)?;
                    name(sec, &mut p)?;
                    let kind = sec[p];
                    p += 1;
                    match kind {
                        0 => {
                            leb(sec, &mut p)?;
                            imported += 1;
                        }
                        1 => {
                            p += 1;
                            limits(sec, &mut p)?;
                        }
                        2 => limits(sec, &mut p)?,
                        3 => p += 2,
                        4 => {
                            p += 1;
                            leb(sec, &mut p)?;
                        }
                        k => return Err(format!("unknown import kind {k}").into()),
                    }
                }
            }
            10 => {
                for _ in 0..leb(sec, &mut p)? {
                    let n = leb(sec, &mut p)? as usize;
                    bodies.push(n);
                    p += n;
                }
            }
            11 => data += size,
            0 if name(sec, &mut p)? == "name" => {
                while p < sec.len() {
                    let sub = sec[p];
                    p += 1;
                    let len = leb(sec, &mut p)? as usize;
                    let next = p + len;
                    if sub == 1 {
                        for _ in 0..leb(sec, &mut p)? {
                            let idx = leb(sec, &mut p)?;
                            names.insert(idx, name(sec, &mut p)?);
                        }
                    }
                    p = next;
                }
            }
            _ => {}
        }
        at = end;
    }
    let mut functions: Vec<(String, usize)> = bodies
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            let idx = imported + i as u64;
            let n = names
                .get(&idx)
                .map(|n| format!("{:#}", rustc_demangle::demangle(n)))
                .unwrap_or_else(|| format!("func[{idx}]"));
            (n, size)
        })
        .collect();
    functions.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Breakdown {
        code: bodies.iter().sum(),
        functions,
        data,
        file: b.len(),
    })
}

/// A markdown report: the largest crates and functions of a module.
pub fn report(title: &str, bd: &Breakdown, top: usize) -> String {
    let kib = |n: usize| n as f64 / 1024.0;
    let mut t = format!(
        "### {title}\n\n{:.0} KiB before wasm-opt: code {:.0} KiB in {} functions, data {:.0} KiB.\n\n\
         | crate | code KiB | share | functions |\n|---|---:|---:|---:|\n",
        kib(bd.file),
        kib(bd.code),
        bd.functions.len(),
        kib(bd.data)
    );
    for (c, size, n) in bd.by_crate().into_iter().take(top) {
        t.push_str(&format!(
            "| {c} | {:.1} | {:.1}% | {n} |\n",
            kib(size),
            100.0 * size as f64 / bd.code.max(1) as f64
        ));
    }
    t.push_str("\n| largest functions | KiB |\n|---|---:|\n");
    for (f, size) in bd.functions.iter().take(top) {
        let f: String = f.chars().take(110).collect();
        t.push_str(&format!(
            "| `{}` | {:.1} |\n",
            f.replace('|', "\\|"),
            kib(*size)
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbol_belongs_to_its_first_path_segment_or_its_implementing_type() {
        assert_eq!(crate_of("serde_json::de::from_str"), "serde_json");
        assert_eq!(
            crate_of("<app::pages::Dashboard as core::fmt::Debug>::fmt"),
            "app"
        );
        assert_eq!(
            crate_of("<&mut serde_json::Serializer<W>>::x"),
            "serde_json"
        );
        assert_eq!(crate_of("func[12]"), "func");
    }

    #[test]
    fn a_minimal_module_with_one_named_function_is_read() {
        // magic, version; type section (one func type () -> ()); function section; code
        // section with one 2-byte body; name section naming function 0.
        let mut m = b"\0asm\x01\0\0\0".to_vec();
        m.extend([1, 4, 1, 0x60, 0, 0]);
        m.extend([3, 2, 1, 0]);
        m.extend([10, 4, 1, 2, 0, 0x0b]);
        let mut names = vec![4u8];
        names.extend(b"name");
        names.extend([1, 6, 1, 0, 3]);
        names.extend(b"foo");
        m.push(0);
        m.push(names.len() as u8);
        m.extend(names);
        let bd = parse(&m).unwrap();
        assert_eq!(bd.functions, vec![("foo".to_string(), 2)]);
        assert_eq!(bd.code, 2);
    }
}
