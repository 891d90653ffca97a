//! The simulator's one hash: stable fingerprints of prompts, documents and files, from which
//! its answers, cache keys and file ids are drawn deterministically.

/// FNV-1a, 64 bit.
pub fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}
