//! Fractional order keys: strings that sort siblings, so that an item can be placed between two
//! others by writing one key, without renumbering the rest.
//!
//! The scheme is the well-known "fractional indexing" one: a key is an integer part whose first
//! character encodes its length (`a0`..`az`, then `b00`..), followed by an optional fraction of
//! base-62 digits that never ends in `0`. Byte order of keys is their numeric order, appending
//! after the last key stays short (a 10,000-item list needs 4-character keys), and a key strictly
//! between any two distinct keys always exists.

const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE: usize = 62;
const FIRST_KEY: &str = "a0";

fn digit(c: u8) -> usize {
    DIGITS.iter().position(|d| *d == c).unwrap_or(0)
}

/// Length of the integer part announced by its head character (`a` → 2, `b` → 3, `Z` → 2).
fn integer_len(head: u8) -> Option<usize> {
    match head {
        b'a'..=b'z' => Some(usize::from(head - b'a') + 2),
        b'A'..=b'Z' => Some(usize::from(b'Z' - head) + 2),
        _ => None,
    }
}

/// Splits a key into its integer and fractional parts; None for a key this module did not make.
fn split(key: &str) -> Option<(&str, &str)> {
    let len = integer_len(*key.as_bytes().first()?)?;
    if key.len() < len || !key.is_ascii() {
        return None;
    }
    Some(key.split_at(len))
}

/// A key strictly between `before` and `after` (either may be absent: the start or the end).
/// Keys not made by this module, or out of order, are treated as absent bounds.
pub fn key_between(before: Option<&str>, after: Option<&str>) -> String {
    let a = before.filter(|k| split(k).is_some());
    let b = after.filter(|k| split(k).is_some());
    let b = match (a, b) {
        (Some(a), Some(b)) if a >= b => None,
        (_, b) => b,
    };
    between(a, b)
}

fn between(a: Option<&str>, b: Option<&str>) -> String {
    match (a.and_then(split), b.and_then(split)) {
        (None, None) => FIRST_KEY.to_string(),
        (None, Some((ib, fb))) => {
            if !fb.is_empty() {
                // `ib` alone sorts before `ib` followed by a fraction.
                return ib.to_string();
            }
            match decrement(ib) {
                Some(d) => d,
                // The smallest integer: go below it with a fraction.
                None => format!("{ib}{}", midpoint(b"", Some(b"1"))),
            }
        }
        (Some((ia, fa)), None) => match increment(ia) {
            Some(i) => i,
            None => format!("{ia}{}", midpoint(fa.as_bytes(), None)),
        },
        (Some((ia, fa)), Some((ib, fb))) => {
            if ia == ib {
                return format!("{ia}{}", midpoint(fa.as_bytes(), Some(fb.as_bytes())));
            }
            match increment(ia) {
                Some(i) if Some(i.as_str()) < b => i,
                _ => format!("{ia}{}", midpoint(fa.as_bytes(), None)),
            }
        }
    }
}

/// `n` keys in increasing order between `before` and `after`, for inserting several items.
pub fn keys_between(before: Option<&str>, after: Option<&str>, n: usize) -> Vec<String> {
    let mut keys = Vec::with_capacity(n);
    let mut prev = before.map(str::to_string);
    for _ in 0..n {
        let key = key_between(prev.as_deref(), after);
        prev = Some(key.clone());
        keys.push(key);
    }
    keys
}

/// A fraction strictly between fractions `a` and `b` (None: 1), `a < b`, neither ending in `0`.
fn midpoint(a: &[u8], b: Option<&[u8]>) -> String {
    if let Some(b) = b {
        let mut n = 0;
        while n < b.len() && a.get(n).copied().unwrap_or(b'0') == b[n] {
            n += 1;
        }
        if n > 0 {
            let rest = midpoint(a.get(n..).unwrap_or(&[]), Some(&b[n..]));
            return format!("{}{rest}", String::from_utf8_lossy(&b[..n]));
        }
    }
    let da = a.first().map_or(0, |c| digit(*c));
    let db = b.and_then(|b| b.first()).map_or(BASE, |c| digit(*c));
    if db > da + 1 {
        return char::from(DIGITS[(da + db).div_ceil(2)]).to_string();
    }
    match b {
        Some(b) if b.len() > 1 => char::from(b[0]).to_string(),
        _ => format!(
            "{}{}",
            char::from(DIGITS[da]),
            midpoint(a.get(1..).unwrap_or(&[]), None)
        ),
    }
}

fn increment(int: &str) -> Option<String> {
    let (head, digits) = int.as_bytes().split_first()?;
    let mut digits = digits.to_vec();
    for d in digits.iter_mut().rev() {
        let next = digit(*d) + 1;
        if next < BASE {
            *d = DIGITS[next];
            return Some(format!(
                "{}{}",
                char::from(*head),
                String::from_utf8_lossy(&digits)
            ));
        }
        *d = b'0';
    }
    // Every digit overflowed: move to the next length.
    match *head {
        b'Z' => Some("a0".to_string()),
        b'z' => None,
        h => {
            let next = h + 1;
            if next > b'a' {
                digits.push(b'0');
            } else {
                digits.pop();
            }
            Some(format!(
                "{}{}",
                char::from(next),
                String::from_utf8_lossy(&digits)
            ))
        }
    }
}

fn decrement(int: &str) -> Option<String> {
    let (head, digits) = int.as_bytes().split_first()?;
    let mut digits = digits.to_vec();
    for d in digits.iter_mut().rev() {
        let value = digit(*d);
        if value > 0 {
            *d = DIGITS[value - 1];
            return Some(format!(
                "{}{}",
                char::from(*head),
                String::from_utf8_lossy(&digits)
            ));
        }
        *d = DIGITS[BASE - 1];
    }
    match *head {
        b'a' => Some(format!("Z{}", char::from(DIGITS[BASE - 1]))),
        b'A' => None,
        h => {
            let next = h - 1;
            if next < b'Z' {
                digits.push(DIGITS[BASE - 1]);
            } else {
                digits.pop();
            }
            Some(format!(
                "{}{}",
                char::from(next),
                String::from_utf8_lossy(&digits)
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_sorted(keys: &[String]) {
        for w in keys.windows(2) {
            assert!(w[0] < w[1], "{} !< {}", w[0], w[1]);
        }
    }

    #[test]
    fn keys_sort_between_their_neighbours() {
        let first = key_between(None, None);
        assert_eq!(first, "a0");
        let after = key_between(Some(&first), None);
        let before = key_between(None, Some(&first));
        assert_sorted(&[before.clone(), first.clone(), after.clone()]);
        let mid = key_between(Some(&first), Some(&after));
        assert_sorted(&[first, mid, after]);
    }

    #[test]
    fn appending_stays_short() {
        let keys = keys_between(None, None, 10_000);
        assert_sorted(&keys);
        assert!(
            keys.iter().map(String::len).max().unwrap_or(0) <= 4,
            "{:?}",
            keys.last()
        );
        let prepended = {
            let mut keys = vec![key_between(None, None)];
            for _ in 0..5000 {
                let k = key_between(None, Some(&keys[0]));
                keys.insert(0, k);
            }
            keys
        };
        assert_sorted(&prepended);
        assert!(prepended[0].len() <= 4, "{}", prepended[0]);
    }

    #[test]
    fn repeated_inserts_between_keep_order() {
        let mut keys = vec![key_between(None, None)];
        keys.push(key_between(Some(&keys[0]), None));
        for i in 0..300 {
            // Alternate between inserting right after the first key and right before the last.
            let k = if i % 2 == 0 {
                key_between(Some(&keys[0]), Some(&keys[1]))
            } else {
                let n = keys.len();
                key_between(Some(&keys[n - 2]), Some(&keys[n - 1]))
            };
            let at = if i % 2 == 0 { 1 } else { keys.len() - 1 };
            keys.insert(at, k);
            assert_sorted(&keys);
        }
        assert!(
            keys.iter()
                .all(|k| split(k).is_some_and(|(_, f)| !f.ends_with('0')))
        );
    }

    #[test]
    fn bad_bounds_still_give_a_key() {
        let k = key_between(Some("a5"), Some("a1"));
        assert!(k.as_str() > "a5");
        let k = key_between(Some("!bad"), None);
        assert_eq!(k, "a0");
    }
}
