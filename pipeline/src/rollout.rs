//! The rollout of the queue path: which users' `POST /api/claude` calls go through the queue.
//! Deterministic per user, so a user never flips between paths while the percent stays put.

use sha1::{Digest, Sha1};

/// The user's bucket, 0–99: SHA-1 of the user id, first 4 bytes big-endian, mod 100.
pub fn bucket(user_id: &str) -> u32 {
    let d = Sha1::digest(user_id.as_bytes());
    u32::from_be_bytes([d[0], d[1], d[2], d[3]]) % 100
}

/// Whether the user is inside a rollout of `percent` (0 = nobody, 100 = everybody).
pub fn in_rollout(user_id: &str, percent: u32) -> bool {
    bucket(user_id) < percent.min(100)
}

/// Reads `QUEUE_ROLLOUT_PERCENT`: a whole number 0–100; anything else is 0, so a typo never
/// moves traffic.
pub fn parse_percent(raw: Option<&str>) -> u32 {
    raw.and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|p| *p <= 100)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_bucket_is_sha1_first_four_bytes_big_endian_mod_100() {
        // SHA-1("abc") = a9993e36…: 0xa9993e36 = 2845392438, mod 100 = 38.
        assert_eq!(bucket("abc"), 38);
    }

    #[test]
    fn zero_is_nobody_and_hundred_is_everybody() {
        for u in ["alice", "bob", "anonymous", "x"] {
            assert!(!in_rollout(u, 0));
            assert!(in_rollout(u, 100));
        }
    }

    #[test]
    fn a_bad_percent_moves_nobody() {
        assert_eq!(parse_percent(Some("25")), 25);
        assert_eq!(parse_percent(Some("150")), 0);
        assert_eq!(parse_percent(Some("ten")), 0);
        assert_eq!(parse_percent(None), 0);
    }

    proptest! {
        #[test]
        fn raising_the_percent_never_removes_a_user(user in "[a-z0-9]{1,20}", p in 0u32..100) {
            if in_rollout(&user, p) {
                prop_assert!(in_rollout(&user, p + 1));
            }
        }
    }
}
