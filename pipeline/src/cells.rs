//! Cells: the same pipeline run as N independent copies (each its own D1, queues, R2 bucket and
//! cron), with every user's work kept in one of them — the key step of the plan past one
//! database. This module decides which cell a user belongs to; the Worker's router forwards a
//! request there.
//!
//! The assignment is a jump consistent hash (Lamping and Veach, "A Fast, Minimal Memory,
//! Consistent Hash Algorithm", 2014) of the user id's FNV-1a 64-bit hash: stable across
//! releases (it depends on nothing but the id and the count), uniform, and when the cells go
//! from N to N + 1 only about 1/(N + 1) of the users move, all of them to the new cell.

use crate::identity::{decide, AuthMode, IdentityDecision};

/// FNV-1a, 64 bits (the published offset basis and prime).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Jump consistent hash: the bucket in `0..buckets` of `key`.
fn jump(mut key: u64, buckets: u32) -> u32 {
    let (mut b, mut j): (i64, i64) = (-1, 0);
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b.max(0) as u32
}

/// The cell (`0..cells`) that keeps `user`'s jobs, usage, spend and budgets.
pub fn cell_of(user: &str, cells: u32) -> u32 {
    if cells <= 1 {
        return 0;
    }
    jump(fnv1a(user.as_bytes()), cells)
}

/// Where the router sends a request, from its identity headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// To this cell (the router's own is 0).
    Cell(u32),
    /// Served where it arrived: no user is named without a look-up (a bearer key needs the
    /// key directory, which is cell 0's), or the headers are refused there.
    Here,
}

/// The route of a request with these identity headers, among `cells` cells.
pub fn route(
    mode: AuthMode,
    authorization: Option<&str>,
    x_user_id: Option<&str>,
    cells: u32,
) -> Route {
    match decide(mode, authorization, x_user_id) {
        IdentityDecision::Resolved(id) => Route::Cell(cell_of(id.user_id.as_str(), cells)),
        _ => Route::Here,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_hashes_are_the_published_ones() {
        // FNV-1a test vectors (draft-eastlake-fnv): "" and "a".
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        // Jump hash: one bucket is always 0, and the key 0 stays in bucket 0.
        assert_eq!(jump(12345, 1), 0);
        assert_eq!(jump(0, 10), 0);
    }

    #[test]
    fn one_cell_holds_everyone_and_users_spread_over_two() {
        assert_eq!(cell_of("ann", 1), 0);
        assert_eq!(cell_of("ann", 0), 0);
        let on_one = (0..1000)
            .filter(|i| cell_of(&format!("user{i}"), 2) == 1)
            .count();
        assert!((400..600).contains(&on_one), "{on_one} of 1000 on cell 1");
    }

    #[test]
    fn a_request_goes_to_the_cell_of_the_user_it_names() {
        let ann = cell_of("ann", 2);
        assert_eq!(
            route(AuthMode::Open, None, Some("ann"), 2),
            Route::Cell(ann)
        );
        // No header: the anonymous user's cell.
        assert_eq!(
            route(AuthMode::Open, None, None, 2),
            Route::Cell(cell_of("anonymous", 2))
        );
        // A key needs the directory; a refused header is refused where it arrived.
        assert_eq!(
            route(AuthMode::Open, Some("Bearer k"), Some("ann"), 2),
            Route::Here
        );
        assert_eq!(route(AuthMode::Keys, None, Some("ann"), 2), Route::Here);
        assert_eq!(route(AuthMode::Open, None, Some(""), 2), Route::Here);
    }

    proptest! {
        #[test]
        fn a_user_stays_in_range_and_moves_only_to_a_new_cell(user in "[a-z0-9_-]{1,40}", n in 1u32..64) {
            let now = cell_of(&user, n);
            prop_assert!(now < n);
            prop_assert_eq!(now, cell_of(&user, n));
            let grown = cell_of(&user, n + 1);
            prop_assert!(grown == now || grown == n, "{} → {} going from {} to {} cells", now, grown, n, n + 1);
        }
    }
}
