//! The key table's hash and equality: a symbol is a few bytes (`SYM001`, `AAPL`), so a key
//! of up to 16 bytes is read as two (overlapping) words, hashed with one folded multiply
//! and compared word by word, with no call; longer keys go through foldhash and `==`.
//! Seeded at random per tracker (from hashbrown's default hasher), as foldhash is.

use hashbrown::DefaultHashBuilder;
use std::hash::BuildHasher;

/// The words a key of up to 16 bytes is read as: together they cover every byte, so two
/// keys of the same length are equal exactly when their words are.
#[inline(always)]
fn words(key: &[u8]) -> (u64, u64) {
    let len = key.len();
    let word = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |at: usize| u64::from(u32::from_le_bytes(key[at..at + 4].try_into().unwrap_or([0; 4])));
    if len >= 8 {
        (word(0), word(len - 8))
    } else if len >= 4 {
        (half(0), half(len - 4))
    } else if len > 0 {
        let (a, b, c) = (key[0], key[len / 2], key[len - 1]);
        (u64::from(a) | u64::from(b) << 8 | u64::from(c) << 16, 0)
    } else {
        (0, 0)
    }
}

#[inline(always)]
fn folded_multiply(x: u64, y: u64) -> u64 {
    let full = u128::from(x) * u128::from(y);
    (full as u64) ^ ((full >> 64) as u64)
}

/// The hash of a (partition id, key) pair.
pub struct KeyHasher {
    seeds: [u64; 2],
    long: DefaultHashBuilder,
}

impl Default for KeyHasher {
    fn default() -> Self {
        let long = DefaultHashBuilder::default();
        // Random per instance, like `long` itself; odd so no seed is zero.
        let seeds = [long.hash_one(0x5eed_u64) | 1, long.hash_one(0x5eed_5eed_u64) | 1];
        KeyHasher { seeds, long }
    }
}

impl KeyHasher {
    #[inline]
    pub fn hash(&self, part: u32, key: &[u8]) -> u64 {
        Probe::new(self, part, key).hash
    }
}

/// A key read once for a lookup: its hash, and its words (`words`) to compare each
/// candidate with.
pub struct Probe<'k> {
    pub hash: u64,
    key: &'k [u8],
    words: (u64, u64),
}

impl<'k> Probe<'k> {
    #[inline(always)]
    pub fn new(hasher: &KeyHasher, part: u32, key: &'k [u8]) -> Self {
        if key.len() > 16 {
            return Probe { hash: hasher.long.hash_one((part, key)), key, words: (0, 0) };
        }
        let words = words(key);
        let tag = (u64::from(part) << 32) | key.len() as u64;
        let hash = folded_multiply(words.0 ^ hasher.seeds[0] ^ tag, words.1 ^ hasher.seeds[1]);
        Probe { hash, key, words }
    }

    /// `held == key`, without a `memcmp` call for a short key.
    #[inline(always)]
    pub fn matches(&self, held: &[u8]) -> bool {
        held.len() == self.key.len()
            && if held.len() <= 16 { words(held) == self.words } else { held == self.key }
    }
}

#[cfg(test)]
mod tests {
    use super::{KeyHasher, Probe};

    #[test]
    fn keys_are_the_same_exactly_when_their_bytes_are() {
        let keys: Vec<Vec<u8>> = (0..=20)
            .flat_map(|len| {
                (0..len).map(move |flip| {
                    let mut key: Vec<u8> = (0..len).map(|i| b'A' + i as u8).collect();
                    key[flip] ^= 0x20;
                    key
                })
            })
            .chain((0..=20).map(|len| (0..len).map(|i| b'A' + i as u8).collect()))
            .chain([vec![], vec![0], vec![0, 0], b"\x00\x00\x00\x00".to_vec()])
            .collect();
        let hasher = KeyHasher::default();
        for a in &keys {
            for b in &keys {
                assert_eq!(Probe::new(&hasher, 0, b).matches(a), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn equal_keys_hash_equal_and_others_rarely_do() {
        let hasher = KeyHasher::default();
        let mut seen = std::collections::HashSet::new();
        for n in 0..20_000u32 {
            let key = format!("SYM{n:05}");
            assert_eq!(hasher.hash(0, key.as_bytes()), hasher.hash(0, key.clone().as_bytes()));
            seen.insert(hasher.hash(n % 3, key.as_bytes()));
        }
        assert!(seen.len() > 19_990);
        let long = b"a symbol of more than sixteen bytes";
        assert_eq!(hasher.hash(1, long), hasher.hash(1, &long.to_vec()));
        assert_ne!(hasher.hash(1, b"AB"), hasher.hash(2, b"AB"));
    }
}
