//! Request rate limits, the way GitBook's API has them: a number of requests per minute for each
//! API token, and for each client address for requests without a valid token (a bad token counts
//! against its address, so guessing tokens is limited like any anonymous traffic).
//!
//! Counting is in memory, per process, in fixed one-minute windows aligned to the clock (so that
//! `X-RateLimit-Reset` is the same for every client): a request costs a read lock on one of
//! sixteen shards and one atomic add, never a database write. With several processes each
//! counts on its own (see `docs/decisions/0036-rate-limits-per-process.md`). Memory is bounded: keys of past windows are
//! dropped when a new window starts, and beyond [`MAX_KEYS_PER_SHARD`] new keys share one
//! overflow counter.
//!
//! A token gets its own counter only once it has been seen valid (in the token cache, filled by
//! authentication); until then its requests count against the client address, so random tokens
//! create nothing. The request that shows a token valid counts against both: the address, and
//! as the first of the token's own counter. Counters live for the window they count and the
//! next, so a busy token keeps its counter from one minute to the next.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use sha2::{Digest, Sha256};

use crate::error::error_response;
use quire_store::auth::TokenCache;

const WINDOW_SECS: u64 = 60;
const SHARDS: usize = 16;
/// Keys kept per shard within a window (16 shards: about 260,000 clients or tokens a minute).
pub const MAX_KEYS_PER_SHARD: usize = 16_384;

/// Paths that are never limited: probes and scrapers must always get through.
pub(crate) const EXEMPT: &[&str] = &["/healthz", "/readyz", "/metrics"];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// The first 128 bits of the token's SHA-256 (never the secret).
    Token(u128),
    /// A client address: IPv4, or the /64 prefix of an IPv6 address (one host usually owns a
    /// whole /64, so counting single IPv6 addresses would let one client pick new ones).
    Client(u128),
    /// Shared by new keys once a shard is full.
    Overflow,
}

/// Where a request stands with its counter.
#[derive(Clone, Copy, Debug)]
pub struct Decision {
    pub limit: u32,
    pub remaining: u32,
    /// Unix seconds when the window ends.
    pub reset: u64,
    pub allowed: bool,
}

/// What [`RateLimiter::admit`] decided, kept until the response is known.
#[derive(Clone, Copy, Debug)]
pub enum Admission {
    /// Not limited (an operations path).
    Exempt,
    Counted {
        decision: Decision,
        /// The SHA-256 of a token counted against the client address: it gets its own counter
        /// if the response shows it valid.
        new_token: Option<[u8; 32]>,
        window: u64,
    },
}

impl Admission {
    /// The 429 answer when the request is over the limit.
    pub fn refusal(&self, now_secs: u64) -> Option<Response> {
        let Admission::Counted { decision, .. } = self else {
            return None;
        };
        if decision.allowed {
            return None;
        }
        let retry = decision.reset.saturating_sub(now_secs).max(1);
        let mut response = error_response(
            StatusCode::TOO_MANY_REQUESTS,
            &format!(
                "rate limit exceeded: {} requests per minute; retry in {retry} s",
                decision.limit
            ),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry));
        decision.write_headers(response.headers_mut());
        Some(response)
    }
}

impl Decision {
    fn write_headers(&self, headers: &mut HeaderMap) {
        headers.insert("x-ratelimit-limit", HeaderValue::from(self.limit));
        headers.insert("x-ratelimit-remaining", HeaderValue::from(self.remaining));
        headers.insert("x-ratelimit-reset", HeaderValue::from(self.reset));
    }
}

pub struct RateLimiter {
    limit: u32,
    trust_proxy: bool,
    /// Each counter packs its window (high 32 bits) and its count (low 32 bits).
    shards: Box<[RwLock<HashMap<Key, AtomicU64>>]>,
    /// The window whose start last cleared the shards.
    swept: AtomicU64,
}

impl RateLimiter {
    /// A limiter of `limit` requests a minute; None when `limit` is 0 (no limit).
    pub fn new(limit: u32, trust_proxy: bool) -> Option<RateLimiter> {
        (limit > 0).then(|| RateLimiter {
            limit,
            trust_proxy,
            shards: (0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect(),
            swept: AtomicU64::new(0),
        })
    }

    /// Counts a request before it is served.
    pub fn admit(
        &self,
        path: &str,
        headers: &HeaderMap,
        peer: SocketAddr,
        tokens: &TokenCache,
        now_secs: u64,
    ) -> Admission {
        if EXEMPT.contains(&path) {
            return Admission::Exempt;
        }
        let window = now_secs / WINDOW_SECS;
        self.sweep(window);
        let mut new_token = None;
        if let Some(token) = bearer(headers) {
            let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
            let key = Key::Token(token_key(&digest));
            if let Some(decision) = self.count_existing(key, window) {
                return Admission::Counted {
                    decision,
                    new_token: None,
                    window,
                };
            }
            if tokens.is_known(&hex(&digest)) {
                return Admission::Counted {
                    decision: self.count(key, window),
                    new_token: None,
                    window,
                };
            }
            new_token = Some(digest);
        }
        let client = Key::Client(client_key(self.client_ip(headers, peer)));
        Admission::Counted {
            decision: self.count(client, window),
            new_token,
            window,
        }
    }

    /// Adds the rate-limit headers to a response, and gives a token seen valid its own counter.
    pub fn finish(&self, admission: &Admission, response: &mut Response, tokens: &TokenCache) {
        let Admission::Counted {
            decision,
            new_token,
            window,
        } = admission
        else {
            return;
        };
        decision.write_headers(response.headers_mut());
        if let Some(digest) = new_token
            && response.status() != StatusCode::UNAUTHORIZED
            && tokens.is_known(&hex(digest))
        {
            let key = Key::Token(token_key(digest));
            let mut shard = self.shard(key).write().unwrap_or_else(PoisonError::into_inner);
            if shard.len() < MAX_KEYS_PER_SHARD {
                shard
                    .entry(key)
                    .or_insert_with(|| AtomicU64::new(pack(*window, 1)));
            }
        }
    }

    /// The client's address: the peer, or behind a trusted proxy the last `X-Forwarded-For`
    /// entry (the one the proxy added).
    fn client_ip(&self, headers: &HeaderMap, peer: SocketAddr) -> IpAddr {
        if self.trust_proxy {
            let forwarded = headers
                .get_all("x-forwarded-for")
                .iter()
                .next_back()
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.rsplit(',').next())
                .and_then(|v| v.trim().parse::<IpAddr>().ok());
            if let Some(ip) = forwarded {
                return ip;
            }
        }
        peer.ip()
    }

    fn shard(&self, key: Key) -> &RwLock<HashMap<Key, AtomicU64>> {
        let n = match key {
            Key::Token(k) | Key::Client(k) => (k ^ (k >> 64)) as usize,
            Key::Overflow => 0,
        };
        &self.shards[n % SHARDS]
    }

    fn count_existing(&self, key: Key, window: u64) -> Option<Decision> {
        let shard = self.shard(key).read().unwrap_or_else(PoisonError::into_inner);
        shard.get(&key).map(|counter| self.bump(counter, window))
    }

    fn count(&self, key: Key, window: u64) -> Decision {
        if let Some(decision) = self.count_existing(key, window) {
            return decision;
        }
        let mut shard = self.shard(key).write().unwrap_or_else(PoisonError::into_inner);
        let key = if shard.len() >= MAX_KEYS_PER_SHARD && !shard.contains_key(&key) {
            Key::Overflow
        } else {
            key
        };
        if key == Key::Overflow {
            drop(shard);
            let mut overflow = self
                .shard(Key::Overflow)
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let counter = overflow
                .entry(Key::Overflow)
                .or_insert_with(|| AtomicU64::new(pack(window, 0)));
            return self.bump(counter, window);
        }
        let counter = shard
            .entry(key)
            .or_insert_with(|| AtomicU64::new(pack(window, 0)));
        self.bump(counter, window)
    }

    /// Adds one to a counter, starting it again when its window is past.
    fn bump(&self, counter: &AtomicU64, window: u64) -> Decision {
        let mut current = counter.load(Ordering::Relaxed);
        let count = loop {
            let (w, n) = unpack(current);
            let next = if w == window & 0xffff_ffff {
                pack(window, n.saturating_add(1))
            } else {
                pack(window, 1)
            };
            match counter.compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break unpack(next).1,
                Err(actual) => current = actual,
            }
        };
        Decision {
            limit: self.limit,
            remaining: self.limit.saturating_sub(count),
            reset: (window + 1) * WINDOW_SECS,
            allowed: count <= self.limit,
        }
    }

    /// Once per window, drops the counters older than the previous window.
    fn sweep(&self, window: u64) {
        let swept = self.swept.load(Ordering::Relaxed);
        if swept >= window
            || self
                .swept
                .compare_exchange(swept, window, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        for shard in self.shards.iter() {
            let mut shard = shard.write().unwrap_or_else(PoisonError::into_inner);
            let previous = window.saturating_sub(1) & 0xffff_ffff;
            shard.retain(|_, counter| unpack(counter.load(Ordering::Relaxed)).0 >= previous);
        }
    }

    #[cfg(test)]
    fn keys(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.read().unwrap_or_else(PoisonError::into_inner).len())
            .sum()
    }
}

fn pack(window: u64, count: u32) -> u64 {
    ((window & 0xffff_ffff) << 32) | u64::from(count)
}

fn unpack(v: u64) -> (u64, u32) {
    (v >> 32, (v & 0xffff_ffff) as u32)
}

fn token_key(digest: &[u8; 32]) -> u128 {
    let mut first = [0u8; 16];
    first.copy_from_slice(&digest[..16]);
    u128::from_be_bytes(first)
}

fn client_key(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => u128::from(v4.to_ipv6_mapped()),
            None => u128::from(v6) & !((1u128 << 64) - 1),
        },
    }
}

/// The bearer token of a request, parsed as `auth` does (anything else is no token).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Lowercase hex, as `auth::token_hash` writes it.
fn hex(digest: &[u8; 32]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(ip: &str) -> SocketAddr {
        SocketAddr::new(ip.parse().unwrap(), 1234)
    }

    fn decision(a: Admission) -> Decision {
        match a {
            Admission::Counted { decision, .. } => decision,
            Admission::Exempt => panic!("exempt"),
        }
    }

    #[test]
    fn counts_per_window_and_starts_again() {
        let limiter = RateLimiter::new(2, false).unwrap();
        let tokens = TokenCache::default();
        let headers = HeaderMap::new();
        let at = 60 * 1000 + 5;
        let first = decision(limiter.admit("/v1/orgs", &headers, peer("10.0.0.1"), &tokens, at));
        assert!(first.allowed);
        assert_eq!(first.remaining, 1);
        assert_eq!(first.reset, 60 * 1001);
        assert!(decision(limiter.admit("/v1/orgs", &headers, peer("10.0.0.1"), &tokens, at)).allowed);
        let third = decision(limiter.admit("/v1/orgs", &headers, peer("10.0.0.1"), &tokens, at));
        assert!(!third.allowed);
        assert_eq!(third.remaining, 0);
        // Another client has its own counter.
        assert!(decision(limiter.admit("/v1/orgs", &headers, peer("10.0.0.2"), &tokens, at)).allowed);
        // The next window starts again; keys older than the previous window are dropped.
        assert!(decision(limiter.admit("/v1/orgs", &headers, peer("10.0.0.1"), &tokens, at + 60)).allowed);
        assert_eq!(limiter.keys(), 2);
        assert!(decision(limiter.admit("/v1/orgs", &headers, peer("10.0.0.1"), &tokens, at + 120)).allowed);
        assert_eq!(limiter.keys(), 1);
        assert!(matches!(
            limiter.admit("/healthz", &headers, peer("10.0.0.1"), &tokens, at),
            Admission::Exempt
        ));
    }

    #[test]
    fn ipv6_clients_are_counted_by_their_64_prefix() {
        assert_eq!(
            client_key("2001:db8:1:2::1".parse().unwrap()),
            client_key("2001:db8:1:2:ffff::9".parse().unwrap())
        );
        assert_ne!(
            client_key("2001:db8:1:2::1".parse().unwrap()),
            client_key("2001:db8:1:3::1".parse().unwrap())
        );
        assert_eq!(
            client_key("::ffff:10.0.0.1".parse().unwrap()),
            client_key("10.0.0.1".parse().unwrap())
        );
    }

    #[test]
    fn the_forwarded_address_is_used_only_behind_a_trusted_proxy() {
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", HeaderValue::from_static("1.2.3.4, 5.6.7.8"));
        let direct = RateLimiter::new(5, false).unwrap();
        assert_eq!(
            direct.client_ip(&headers, peer("10.0.0.1")),
            peer("10.0.0.1").ip()
        );
        let proxied = RateLimiter::new(5, true).unwrap();
        assert_eq!(
            proxied.client_ip(&headers, peer("10.0.0.1")),
            "5.6.7.8".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn memory_is_bounded() {
        let limiter = RateLimiter::new(1000, false).unwrap();
        let tokens = TokenCache::default();
        let headers = HeaderMap::new();
        for i in 0..(SHARDS * MAX_KEYS_PER_SHARD + 5000) as u32 {
            let ip = std::net::Ipv4Addr::from(i);
            limiter.admit(
                "/v1/user",
                &headers,
                SocketAddr::new(IpAddr::V4(ip), 1),
                &tokens,
                600,
            );
        }
        assert!(limiter.keys() <= SHARDS * MAX_KEYS_PER_SHARD + 1);
    }

    #[test]
    fn hex_matches_token_hash() {
        let digest: [u8; 32] = Sha256::digest(b"abc").into();
        assert_eq!(hex(&digest), crate::auth::token_hash("abc"));
    }
}
