//! Identifiers and secrets: random, URL-safe base62.

use rand::RngExt;

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A random base62 string of `len` characters (5.95 bits each).
pub fn random_base62(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| char::from(BASE62[rng.random_range(0..BASE62.len())]))
        .collect()
}

/// A new resource identifier: 20 base62 characters, 119 bits of entropy.
pub fn new_id() -> String {
    random_base62(20)
}

/// Whether `s` could be an identifier quire issued (or GitBook's pattern allows): it keeps
/// malformed ids from reaching queries and error messages unbounded.
pub fn is_valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_long_random_and_valid() {
        let a = new_id();
        let b = new_id();
        assert_eq!(a.len(), 20);
        assert_ne!(a, b);
        assert!(is_valid_id(&a));
        assert!(!is_valid_id("a/b"));
        assert!(!is_valid_id(""));
    }
}
