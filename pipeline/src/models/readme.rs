//! The README's model table, rendered from the catalog, so that it cannot drift: a test
//! compares it with the README's text between `<!-- models:begin -->` and `<!-- models:end -->`
//! (and prints the table to paste when they differ).

use super::{day_text as date, GeneralRule, Model, CATALOG};

/// The day the table is drawn for: models retired by then are left out (a fixed day, so the
/// table does not change under a test run on a later date; move it when the catalog is re-read).
pub const AS_OF: (i32, u32, u32) = (2026, 12, 6);

/// A $/MTok figure as the pricing page writes it (`4`, `0.20`, `0.01`).
fn usd(micros: u64) -> String {
    let whole = micros / 1_000_000;
    let cents = micros % 1_000_000;
    match cents {
        0 => whole.to_string(),
        c if c % 10_000 == 0 => format!("{whole}.{:02}", c / 10_000),
        c => format!("{whole}.{:06}", c).trim_end_matches('0').to_owned(),
    }
}

fn tokens(n: u32) -> String {
    match n {
        n if n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}K", n / 1_000),
        n => n.to_string(),
    }
}

fn row(m: &Model) -> String {
    let price = m.prices.last().map_or("—".to_owned(), |p| {
        let since = match m.prices.len() {
            1 => String::new(),
            _ => format!(" (since {})", date(p.from)),
        };
        format!(
            "{} / {} / {}{since}",
            usd(p.input),
            usd(p.output),
            usd(p.cache_read)
        )
    });
    let thinking = match (m.thinking.on_by_default, m.thinking.disabled) {
        (true, false) => "adaptive, always on",
        (true, true) => "adaptive",
        (false, _) => "off",
    };
    let efforts: Vec<&str> = m.efforts.iter().map(|e| e.as_str()).collect();
    let effort = match (efforts.is_empty(), m.default_effort) {
        (true, _) => "none".to_owned(),
        (false, Some(d)) => format!("{} ({})", efforts.join(", "), d.as_str()),
        (false, None) => efforts.join(", "),
    };
    let fast = m.fast.map_or("—".to_owned(), |f| {
        format!("×{}", f.price_permille as f64 / 1000.0)
    });
    let standing = match (m.deprecated_on, m.retires_on) {
        (Some(d), Some(r)) => format!("deprecated {}, retires {}", date(d), date(r)),
        (Some(d), None) => format!("deprecated {}", date(d)),
        (None, Some(r)) => format!("retires {}", date(r)),
        (None, None) => "active".to_owned(),
    };
    let aliases = match m.aliases {
        [] => String::new(),
        a => format!(" (alias {})", a.join(", ")),
    };
    // A figure taken from a general rule of the docs, not the model's own pages.
    let assumed = |rule: GeneralRule| match m.general_rules.contains(&rule) {
        true => " *",
        false => "",
    };
    format!(
        "| `{}`{aliases} | {} / {} | {}{} | {thinking} | {effort} | {price}{} | {fast}{} | {standing} | {} |",
        m.id,
        tokens(m.context_window),
        tokens(m.max_output),
        m.min_cacheable,
        assumed(GeneralRule::MinCacheable),
        assumed(GeneralRule::CachePrices),
        assumed(GeneralRule::FastPrices),
        date(m.read_on)
    )
}

/// The table: every model not retired on [`AS_OF`], in the catalog's order.
pub fn table() -> String {
    let as_of = super::day_ms(AS_OF);
    let mut out = String::from(
        "| model | context / max output | min cache | thinking without a setting | effort (default) | $/MTok in / out / cache read | fast mode | standing | read |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for m in CATALOG.iter().filter(|m| !m.is_retired(as_of)) {
        out.push_str(&row(m));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_readme_model_table_is_the_catalogs() {
        let readme = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"));
        let inside = readme
            .split_once("<!-- models:begin -->\n")
            .and_then(|(_, rest)| rest.split_once("<!-- models:end -->"))
            .map(|(t, _)| t)
            .unwrap_or_default();
        let want = super::table();
        assert!(
            inside == want,
            "README.md's model table differs from the catalog; paste this between the markers:\n{want}"
        );
    }
}
