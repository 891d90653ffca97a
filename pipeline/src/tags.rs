//! Cost by tag (issue 20, part 2): a producer may label a job with a few short `key=value`
//! strings (team, feature, customer), and usage is summed per tag from a rollup kept like the
//! per-user one (migration 0018), so a tag's figures equal the sum of its jobs'.
//!
//! A tag is `key=value`: the key 1–32 characters of `a-z 0-9 _ . -`, starting with a letter or
//! a digit; the value 1–64 characters of `A-Z a-z 0-9 _ . - : / @ +`. At most [`MAX_TAGS`] per
//! job, one per key. Stored sorted, so the same labels in another order are the same tags.

use crate::error::ApiError;

/// Tags on one job.
pub const MAX_TAGS: usize = 8;
pub const MAX_KEY_CHARS: usize = 32;
pub const MAX_VALUE_CHARS: usize = 64;

fn key_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '-')
}

fn value_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | ':' | '/' | '@' | '+')
}

/// Why a tag is refused, in words for the 400.
fn check(tag: &str) -> Result<(), String> {
    let Some((key, value)) = tag.split_once('=') else {
        return Err(format!("tag {tag:?} must be key=value"));
    };
    let key_ok = !key.is_empty()
        && key.len() <= MAX_KEY_CHARS
        && key.chars().all(key_char)
        && key.starts_with(|c: char| c.is_ascii_alphanumeric());
    if !key_ok {
        return Err(format!(
            "tag {tag:?}: the key must be 1 to {MAX_KEY_CHARS} characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit"
        ));
    }
    if value.is_empty() || value.len() > MAX_VALUE_CHARS || !value.chars().all(value_char) {
        return Err(format!(
            "tag {tag:?}: the value must be 1 to {MAX_VALUE_CHARS} characters of A-Z, a-z, 0-9, '_', '.', '-', ':', '/', '@', '+'"
        ));
    }
    Ok(())
}

fn bad(message: String) -> ApiError {
    ApiError::bad_request("invalid_field", message, Some("tags"))
}

/// A producer's `tags`, checked: sorted, each valid, at most [`MAX_TAGS`], one per key.
pub fn parse(tags: &[String]) -> Result<Vec<String>, ApiError> {
    if tags.len() > MAX_TAGS {
        return Err(bad(format!("at most {MAX_TAGS} tags per job")));
    }
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        check(tag).map_err(bad)?;
        out.push(tag.clone());
    }
    out.sort();
    for pair in out.windows(2) {
        let key = |t: &str| t.split_once('=').map(|(k, _)| k.to_owned());
        if key(&pair[0]) == key(&pair[1]) {
            return Err(bad(format!(
                "one tag per key: {:?} and {:?}",
                pair[0], pair[1]
            )));
        }
    }
    Ok(out)
}

/// A JSON body's `tags` field: absent or null is none; otherwise an array of strings, checked
/// by [`parse`].
pub fn from_json(value: Option<&serde_json::Value>) -> Result<Vec<String>, ApiError> {
    match value {
        None | Some(serde_json::Value::Null) => Ok(Vec::new()),
        Some(serde_json::Value::Array(items)) => {
            let strings = items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
                .ok_or_else(|| bad("tags must be an array of strings".into()))?;
            parse(&strings)
        }
        Some(_) => Err(bad("tags must be an array of strings".into())),
    }
}

/// The `?tag=` filter of a listing: one valid tag.
pub fn parse_filter(tag: &str) -> Result<String, ApiError> {
    check(tag).map_err(|m| ApiError::bad_request("invalid_filter", m, Some("tag")))?;
    Ok(tag.to_owned())
}

/// The stored form: a JSON array (what the rollup's triggers read with `json_each`), or
/// nothing for no tags.
pub fn to_column(tags: &[String]) -> Option<String> {
    (!tags.is_empty()).then(|| serde_json::to_string(tags).unwrap_or_default())
}

/// The stored form read back (a column that does not parse reads as no tags).
pub fn from_column(column: Option<&str>) -> Vec<String> {
    column
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or_default()
}

/// [`from_column`] as a row's field is read (`#[serde(deserialize_with = ...)]`).
pub fn deserialize_column<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let column: Option<String> = serde::Deserialize::deserialize(d)?;
    Ok(from_column(column.as_deref()))
}

#[cfg(test)]
mod tests;
