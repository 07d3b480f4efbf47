//! Prometheus metrics: request counts and latency histograms per route, in the text format.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use quire_store::stamped::CacheSize;

/// Upper bounds of the latency histogram buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

#[derive(Default)]
pub struct Metrics {
    routes: Mutex<HashMap<RouteKey, RouteStats>>,
}

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct RouteKey {
    method: String,
    route: String,
    status: u16,
}

#[derive(Default)]
struct RouteStats {
    count: u64,
    sum_seconds: f64,
    buckets: [u64; BUCKETS.len()],
}

impl Metrics {
    pub fn record(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let key = RouteKey {
            method: method.to_string(),
            route: route.to_string(),
            status,
        };
        let mut routes = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        let stats = routes.entry(key).or_default();
        stats.count += 1;
        stats.sum_seconds += seconds;
        for (bucket, bound) in stats.buckets.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
    }

    /// The Prometheus text exposition of everything recorded so far, and of how full the
    /// process's caches are.
    pub fn render(&self, caches: &[CacheSize]) -> String {
        let routes = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        let mut keys: Vec<&RouteKey> = routes.keys().collect();
        keys.sort();
        let mut out = String::new();
        out.push_str("# HELP quire_http_requests_total HTTP requests answered.\n");
        out.push_str("# TYPE quire_http_requests_total counter\n");
        for key in &keys {
            let _ = writeln!(
                out,
                "quire_http_requests_total{{{}}} {}",
                labels(key),
                routes[*key].count
            );
        }
        out.push_str("# HELP quire_http_request_duration_seconds Time to answer HTTP requests.\n");
        out.push_str("# TYPE quire_http_request_duration_seconds histogram\n");
        for key in &keys {
            let stats = &routes[*key];
            let labels = labels(key);
            for (count, bound) in stats.buckets.iter().zip(BUCKETS) {
                let _ = writeln!(
                    out,
                    "quire_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "quire_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                stats.count
            );
            let _ = writeln!(
                out,
                "quire_http_request_duration_seconds_sum{{{labels}}} {}",
                stats.sum_seconds
            );
            let _ = writeln!(
                out,
                "quire_http_request_duration_seconds_count{{{labels}}} {}",
                stats.count
            );
        }
        render_caches(&mut out, caches);
        out
    }
}

/// A gauge of each cache: its name, help, and value.
type CacheGauge = (&'static str, &'static str, fn(&CacheSize) -> u64);

/// The caches' gauges: what they hold (items, and weight in their unit) against their capacity.
fn render_caches(out: &mut String, caches: &[CacheSize]) {
    let gauges: [CacheGauge; 3] = [
        ("quire_cache_items", "Entries held by an in-memory cache.", |c| {
            c.items as u64
        }),
        (
            "quire_cache_weight",
            "What an in-memory cache holds, in its unit (bytes, or page entries of trees).",
            |c| c.weight,
        ),
        (
            "quire_cache_capacity",
            "The most an in-memory cache holds, in its unit.",
            |c| c.capacity,
        ),
    ];
    for (name, help, value) in gauges {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} gauge");
        for cache in caches {
            let _ = writeln!(
                out,
                "{name}{{cache=\"{}\",unit=\"{}\"}} {}",
                cache.name,
                cache.unit,
                value(cache)
            );
        }
    }
}

fn labels(key: &RouteKey) -> String {
    format!(
        "method=\"{}\",route=\"{}\",status=\"{}\"",
        key.method,
        key.route.replace('\\', "\\\\").replace('"', "\\\""),
        key.status
    )
}
