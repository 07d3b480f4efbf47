//! Rendered answers of `GET .../published` (api/sites/published.rs), kept by the published
//! load they were rendered from (its `generation`, new after any write) and what the visitor
//! sees.

use bytes::Bytes;
use quire_store::sites::published::Shown;

/// A rendered published site, plain and compressed (about 140 KB and 10 KB for 60 site
/// spaces: compressed once per render rather than per request).
#[derive(Clone)]
pub struct Body {
    pub plain: Bytes,
    pub gzip: Bytes,
}

/// Rendered published sites by (load generation, what the visitor sees), at most
/// `BODIES_BYTES` in all.
pub struct Bodies(quick_cache::sync::Cache<(u64, Shown), Body, BodyWeight>);

/// Only the bodies of a site's current load are ever asked for again (a new load has a new
/// generation), so a few megabytes hold every visitor set of the live loads; more only kept
/// dead generations and raised the bench's peak RSS by about 16 MB.
const BODIES_BYTES: u64 = 4 << 20;

impl Bodies {
    pub fn get(&self, key: &(u64, Shown)) -> Option<Body> {
        self.0.get(key)
    }

    pub fn insert(&self, key: (u64, Shown), body: Body) {
        self.0.insert(key, body);
    }

    pub fn size(&self) -> quire_store::stamped::CacheSize {
        quire_store::stamped::CacheSize::of("published_bodies", "bytes", &self.0)
    }
}

impl Default for Bodies {
    fn default() -> Self {
        Bodies(quick_cache::sync::Cache::with_weighter(
            1_000,
            BODIES_BYTES,
            BodyWeight,
        ))
    }
}

#[derive(Clone)]
pub struct BodyWeight;

impl quick_cache::Weighter<(u64, Shown), Body> for BodyWeight {
    fn weight(&self, _: &(u64, Shown), body: &Body) -> u64 {
        (body.plain.len() + body.gzip.len()) as u64 + 64
    }
}
