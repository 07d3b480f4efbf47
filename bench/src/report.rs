//! The markdown report of a run: machine, dataset, one table per engine with every figure
//! absolute and as a ratio to the reference server, the budgets with pass or fail, memory.

use std::fmt::Write as _;

use crate::conversations::{self as cv, ConversationsResult};
use crate::events::{self as ev, EventsResult, Latency};
use crate::load::{Family, FamilyResult};
use crate::openapi::{self as oa, OpenApiResult};
use crate::pathological::{self as patho, PathologicalResult};
use crate::pdf::{self as pd, PdfResult};
use crate::run::{EngineReport, RunReport};
use crate::scripts::{self as sc, ScriptsResult};
use crate::sites::{self as si, ReaderResult, SitesResult};
use crate::writers::{self as wr, WritersResult};

/// A budget's outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Pass,
    Fail,
    Missing,
    /// What the phase measures with was not there (GitBook's OpenAPI description).
    InputMissing,
    /// The phase was not in the mix.
    NotRun,
}

impl Verdict {
    fn text(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "**FAIL**",
            Verdict::Missing => "n/a (endpoint missing)",
            Verdict::InputMissing => "n/a (input missing)",
            Verdict::NotRun => "not run",
        }
    }
}

pub struct Budget {
    pub name: String,
    pub target: String,
    pub measured: String,
    /// The same figure on one connection, for context.
    pub unloaded: String,
    pub verdict: Verdict,
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

fn percent(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn times(v: f64, reference: f64) -> String {
    if reference > 0.0 {
        format!("{:.1}×", v / reference)
    } else {
        "-".into()
    }
}

fn latency_budget(e: &EngineReport, family: Family, name: &str, quantile: &str, limit_ms: f64) -> Budget {
    let pick = |r: &FamilyResult| if quantile == "p50" { r.p50_ms } else { r.p99_ms };
    let result = e.result(family);
    let single = e
        .single(family)
        .filter(|r| !r.missing)
        .map(|r| format!("{} at 1 conn", ms(pick(r))))
        .unwrap_or_default();
    match result {
        None => Budget {
            name: name.into(),
            target: format!("{quantile} < {limit_ms} ms"),
            measured: "-".into(),
            unloaded: single,
            verdict: Verdict::NotRun,
        },
        Some(r) if r.missing || r.requests == 0 => Budget {
            name: name.into(),
            target: format!("{quantile} < {limit_ms} ms"),
            measured: if r.missing {
                "-".into()
            } else {
                format!("no successful request ({} errors)", r.errors)
            },
            unloaded: single,
            verdict: if r.missing {
                Verdict::Missing
            } else {
                Verdict::Fail
            },
        },
        Some(r) => Budget {
            name: name.into(),
            target: format!("{quantile} < {limit_ms} ms"),
            measured: format!("{} at {} conns", ms(pick(r)), r.connections),
            unloaded: single,
            verdict: if pick(r) < limit_ms && r.errors == 0 {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        },
    }
}

/// Page 1 and a deep page of one list: p50 within 20% of each other.
fn list_budget(e: &EngineReport, first: Family, deep: Family, name: &str) -> Budget {
    let target = "deep page p50 within 20% of page 1".to_string();
    match (e.result(first), e.result(deep)) {
        (Some(a), Some(b)) if !a.missing && !b.missing && a.requests > 0 && b.requests > 0 => {
            let ratio = b.p50_ms / a.p50_ms.max(1e-9);
            Budget {
                name: name.into(),
                target,
                measured: format!(
                    "{} vs {} ({}; {})",
                    ms(a.p50_ms),
                    ms(b.p50_ms),
                    format_args!("{:+.0}%", (ratio - 1.0) * 100.0),
                    b.detail
                ),
                unloaded: match (e.single(first), e.single(deep)) {
                    (Some(x), Some(y)) if x.requests > 0 && y.requests > 0 => {
                        format!("{} vs {} at 1 conn", ms(x.p50_ms), ms(y.p50_ms))
                    }
                    _ => String::new(),
                },
                verdict: if (ratio - 1.0).abs() <= 0.20 && a.errors == 0 && b.errors == 0 {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                },
            }
        }
        (Some(a), Some(b)) if a.missing || b.missing => Budget {
            name: name.into(),
            target,
            measured: "-".into(),
            unloaded: String::new(),
            verdict: Verdict::Missing,
        },
        (Some(_), Some(_)) => Budget {
            name: name.into(),
            target,
            measured: "no successful request".into(),
            unloaded: String::new(),
            verdict: Verdict::Fail,
        },
        _ => Budget {
            name: name.into(),
            target,
            measured: "-".into(),
            unloaded: String::new(),
            verdict: Verdict::NotRun,
        },
    }
}

/// The `pathological` phase: its worst merge, and the small write's p99 over every merge window.
/// A merge that did not merge (conflicts, an error) fails both: the phase stopped there.
fn pathological_budgets(e: &EngineReport) -> [Budget; 2] {
    let merge_name = "merge of a page at the limits";
    let merge_target = format!(
        "worst of {} merges < {} s",
        2 * patho::REPEATS,
        patho::MERGE_BUDGET_MS / 1000.0
    );
    let write_name = "small write during that merge";
    let write_target = format!("p99 < {} ms", patho::SMALL_WRITE_P99_BUDGET_MS);
    let Some(p) = &e.pathological else {
        let not_run = |name: &str, target: String| Budget {
            name: name.into(),
            target,
            measured: "-".into(),
            unloaded: String::new(),
            verdict: Verdict::NotRun,
        };
        return [
            not_run(merge_name, merge_target),
            not_run(write_name, write_target),
        ];
    };
    let failure = (!p.complete()).then(|| {
        p.failure
            .clone()
            .unwrap_or_else(|| format!("{} of {} merges ran", p.merges.len(), 2 * patho::REPEATS))
    });
    let merge = match p.worst_merge() {
        Some(w) => Budget {
            name: merge_name.into(),
            target: merge_target,
            measured: format!(
                "{} ({} {}){}",
                ms(w.merge_ms),
                w.kind,
                w.repeat,
                failure
                    .as_ref()
                    .map(|f| format!("; failed: {}", f.replace('|', "/")))
                    .unwrap_or_default()
            ),
            unloaded: String::new(),
            verdict: if failure.is_none() && w.merge_ms < patho::MERGE_BUDGET_MS {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        },
        None => Budget {
            name: merge_name.into(),
            target: merge_target,
            measured: format!(
                "no merge ran: {}",
                failure.clone().unwrap_or_default().replace('|', "/")
            ),
            unloaded: String::new(),
            verdict: Verdict::Fail,
        },
    };
    let quiet = p
        .window(patho::QUIET)
        .filter(|w| w.small_write.requests > 0)
        .map(|w| format!("p99 {} without a merge", ms(w.small_write.p99_ms)))
        .unwrap_or_default();
    let write = match p.window(patho::DURING_ALL).map(|w| (w, &w.small_write)) {
        Some((w, r)) if r.requests > 0 => Budget {
            name: write_name.into(),
            target: write_target,
            measured: format!(
                "p99 {} (p50 {}, {} writes in {} merge windows){}",
                ms(r.p99_ms),
                ms(r.p50_ms),
                r.requests,
                w.merges,
                if r.errors > 0 {
                    format!(", {} errors", r.errors)
                } else {
                    String::new()
                }
            ),
            unloaded: quiet,
            verdict: if failure.is_none() && r.errors == 0 && r.p99_ms < patho::SMALL_WRITE_P99_BUDGET_MS {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        },
        _ => Budget {
            name: write_name.into(),
            target: write_target,
            measured: "no small write answered during the merges".into(),
            unloaded: quiet,
            verdict: Verdict::Fail,
        },
    };
    [merge, write]
}

/// The `openapi` phase: the slowest of its specifications from create to `complete`, and the
/// slowest cold read of a generated reference page as markdown. A specification that failed
/// to process fails both (no page was generated from it).
pub fn openapi_budgets(e: &EngineReport) -> [Budget; 2] {
    let process_name = "OpenAPI processing (GitBook's description)";
    let process_target = format!(
        "worst of {} from create to `complete` ≤ {} ms",
        oa::SPECS,
        oa::PROCESS_BUDGET_MS
    );
    let page_name = "OpenAPI reference page as markdown (cold)";
    let page_target = format!("worst page ≤ {} ms", oa::PAGE_BUDGET_MS);
    let all = |measured: &str, verdict: Verdict| {
        [
            Budget {
                name: process_name.into(),
                target: process_target.clone(),
                measured: measured.into(),
                unloaded: String::new(),
                verdict: verdict.clone(),
            },
            Budget {
                name: page_name.into(),
                target: page_target.clone(),
                measured: measured.into(),
                unloaded: String::new(),
                verdict,
            },
        ]
    };
    let Some(o) = &e.openapi else {
        return all("-", Verdict::NotRun);
    };
    if o.description_missing {
        return all(
            &format!(
                "GitBook's description is missing: `{}` (run `bash .ci/gitbook-api`)",
                o.description
            ),
            Verdict::InputMissing,
        );
    }
    if o.endpoint_missing {
        return all("-", Verdict::Missing);
    }
    let failure = o
        .failure
        .as_ref()
        .map(|f| format!("; failed: {}", f.replace('|', "/")))
        .unwrap_or_default();
    let process = match o.worst_processing() {
        Some(w) => Budget {
            name: process_name.into(),
            target: process_target,
            measured: format!(
                "{} ({}; {} of {} processed{}){}",
                ms(w.complete_ms),
                w.slug,
                o.specs.iter().filter(|s| s.ok).count(),
                oa::SPECS,
                if o.specs.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", all: {}",
                        o.specs
                            .iter()
                            .map(|s| ms(s.complete_ms))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
                if o.processing_complete() {
                    String::new()
                } else {
                    failure.clone()
                }
            ),
            unloaded: String::new(),
            verdict: if o.processing_complete() && w.complete_ms <= oa::PROCESS_BUDGET_MS {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        },
        None => Budget {
            name: process_name.into(),
            target: process_target,
            measured: format!("no specification processed{failure}"),
            unloaded: String::new(),
            verdict: Verdict::Fail,
        },
    };
    let page = match o.slowest_page() {
        Some(p) => Budget {
            name: page_name.into(),
            target: page_target,
            measured: format!(
                "{} (`{}`, {:.1} KB of markdown); median {}; {} pages{}; warm worst {}{}",
                ms(p.cold_ms),
                p.title.replace('|', "/").replace('`', "'"),
                p.markdown_bytes as f64 / 1024.0,
                ms(o.cold_median_ms()),
                o.pages.len(),
                match o.page_errors() {
                    0 => String::new(),
                    n => format!(", {n} failed"),
                },
                o.warm_max_ms().map(ms).unwrap_or_else(|| "-".into()),
                failure
            ),
            unloaded: String::new(),
            verdict: if o.failure.is_none() && o.page_errors() == 0 && p.cold_ms <= oa::PAGE_BUDGET_MS {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        },
        None => Budget {
            name: page_name.into(),
            target: page_target,
            measured: format!("no page read{failure}"),
            unloaded: String::new(),
            verdict: Verdict::Fail,
        },
    };
    [process, page]
}

/// The `events` phase: every event delivered; the delivery's p99 from the merge's answer to
/// the receipt of its `space_content_updated`; merge p50 with the integration installed against
/// the baseline's.
pub fn events_budgets(e: &EngineReport) -> [Budget; 3] {
    let delivered_name = "integration events: every event delivered";
    let delivered_target = format!(
        "every merge's `{}` received; none `failed` or `pending` within {} s of the load's end",
        ev::CONTENT_UPDATED,
        ev::SETTLE_TIMEOUT.as_secs()
    );
    let latency_name = "integration events: merge → receipt";
    let latency_target = format!("p99 < {} ms", ev::DELIVERY_P99_BUDGET_MS);
    let merge_name = "merge with an integration installed";
    let merge_target = format!(
        "p50 ≤ {:.0}% of the merge p50 without one (within noise)",
        ev::MERGE_P50_SHARE * 100.0
    );
    let all = |measured: &str, verdict: Verdict| {
        [
            (delivered_name, delivered_target.clone()),
            (latency_name, latency_target.clone()),
            (merge_name, merge_target.clone()),
        ]
        .map(|(name, target)| Budget {
            name: name.into(),
            target,
            measured: measured.into(),
            unloaded: String::new(),
            verdict: verdict.clone(),
        })
    };
    let Some(x) = &e.events else {
        return all("-", Verdict::NotRun);
    };
    if x.endpoint_missing {
        return all("-", Verdict::Missing);
    }
    let failure = x
        .failure
        .as_ref()
        .map(|f| format!("; failed: {}", f.replace('|', "/")))
        .unwrap_or_default();
    let delivered = Budget {
        name: delivered_name.into(),
        target: delivered_target,
        measured: if x.checked {
            format!(
                "{} of {} received{}; {} events listed: {} success, {} pending, {} failed{}{}",
                x.received,
                x.expected,
                x.all_received_ms
                    .map(|t| format!(" (the last {} after the load)", ms(t)))
                    .unwrap_or_default(),
                x.listed,
                x.success,
                x.pending,
                x.failed,
                if x.not_received > 0 {
                    format!(", {} never reached the receiver", x.not_received)
                } else {
                    String::new()
                },
                failure
            )
        } else {
            format!(
                "not checked{}",
                if failure.is_empty() {
                    String::new()
                } else {
                    failure.clone()
                }
            )
        },
        unloaded: String::new(),
        verdict: if x.all_delivered() {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
    };
    let missing = x.expected.saturating_sub(x.received);
    let latency = match &x.delivery {
        Some(d) => Budget {
            name: latency_name.into(),
            target: latency_target,
            measured: format!(
                "p99 {} (p50 {}, max {}, {} merges){}{}",
                ms(d.p99_ms),
                ms(d.p50_ms),
                ms(d.max_ms),
                d.count,
                x.delivery_from_sent
                    .as_ref()
                    .map(|s| format!("; from the request sent: p99 {}", ms(s.p99_ms)))
                    .unwrap_or_default(),
                if missing > 0 {
                    format!("; {missing} merges' events never arrived")
                } else {
                    String::new()
                }
            ),
            unloaded: String::new(),
            // An event that never arrived has no latency at all: the p99 of those that did
            // cannot pass for it.
            verdict: if missing == 0 && d.p99_ms < ev::DELIVERY_P99_BUDGET_MS {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        },
        None => Budget {
            name: latency_name.into(),
            target: latency_target,
            measured: format!("no event received for a measured merge{failure}"),
            unloaded: String::new(),
            verdict: Verdict::Fail,
        },
    };
    let merge = match (&x.baseline, &x.with_integration, x.merge_p50_ratio()) {
        (Some(a), Some(b), Some(ratio)) => Budget {
            name: merge_name.into(),
            target: merge_target,
            measured: format!(
                "{} with, {} without ({}; p99 {} and {}; {:.1} and {:.1} merges/s){}",
                ms(b.p50_ms),
                ms(a.p50_ms),
                percent(ratio),
                ms(b.p99_ms),
                ms(a.p99_ms),
                b.rps,
                a.rps,
                errors_note(&[a, b])
            ),
            unloaded: String::new(),
            verdict: if ratio <= ev::MERGE_P50_SHARE && a.errors == 0 && b.errors == 0 {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        },
        _ => Budget {
            name: merge_name.into(),
            target: merge_target,
            measured: format!(
                "not measured on both sides{}{}",
                errors_note(&x.baseline.iter().chain(&x.with_integration).collect::<Vec<_>>()),
                failure
            ),
            unloaded: String::new(),
            verdict: Verdict::Fail,
        },
    };
    [delivered, latency, merge]
}

/// The `scripts` phase: p99 of the cached render, p99 of uncached renders (a fresh context
/// each), and the server's peak resident set while 100 renders arrive at once over its idle
/// figure just before.
pub fn scripts_budgets(e: &EngineReport) -> [Budget; 3] {
    let cached_name = "component render, cached";
    let cached_target = format!("p99 < {} ms", sc::CACHED_P99_BUDGET_MS);
    let uncached_name = "component render, uncached (context creation included)";
    let uncached_target = format!("p99 < {} ms", sc::UNCACHED_P99_BUDGET_MS);
    let memory_name = "memory: 100 concurrent renders";
    let memory_target = format!(
        "peak RSS within {} MB of its idle figure",
        sc::MEMORY_DELTA_BUDGET_MB
    );
    let all = |measured: &str, verdict: Verdict| {
        [
            (cached_name, cached_target.clone()),
            (uncached_name, uncached_target.clone()),
            (memory_name, memory_target.clone()),
        ]
        .map(|(name, target)| Budget {
            name: name.into(),
            target,
            measured: measured.into(),
            unloaded: String::new(),
            verdict: verdict.clone(),
        })
    };
    let Some(x) = &e.scripts else {
        return all("-", Verdict::NotRun);
    };
    if x.endpoint_missing {
        return all("-", Verdict::Missing);
    }
    let failure = x
        .failure
        .as_ref()
        .map(|f| format!("; failed: {}", f.replace('|', "/")))
        .unwrap_or_default();
    let unloaded = |r: &Option<FamilyResult>| {
        r.as_ref()
            .filter(|r| r.requests > 0)
            .map(|r| format!("{} at 1 conn", ms(r.p99_ms)))
            .unwrap_or_default()
    };
    let latency = |name: &str,
                   target: String,
                   r: &Option<FamilyResult>,
                   single: &Option<FamilyResult>,
                   limit: f64,
                   extra: String| match r {
        Some(r) if r.requests > 0 => Budget {
            name: name.into(),
            target,
            measured: format!(
                "p99 {} at {} conns (p50 {}, max {}, {:.0} renders/s{}){extra}",
                ms(r.p99_ms),
                r.connections,
                ms(r.p50_ms),
                ms(r.max_ms),
                r.rps,
                errors_note(&[r])
            ),
            unloaded: unloaded(single),
            verdict: if r.p99_ms < limit && r.errors == 0 {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        },
        Some(r) => Budget {
            name: name.into(),
            target,
            measured: format!("no successful render ({} errors){failure}", r.errors),
            unloaded: unloaded(single),
            verdict: Verdict::Fail,
        },
        None => Budget {
            name: name.into(),
            target,
            measured: format!("not measured{failure}"),
            unloaded: String::new(),
            verdict: Verdict::Fail,
        },
    };
    let cached = latency(
        cached_name,
        cached_target.clone(),
        &x.cached,
        &x.cached_single,
        sc::CACHED_P99_BUDGET_MS,
        String::new(),
    );
    let uncached = latency(
        uncached_name,
        uncached_target.clone(),
        &x.uncached,
        &x.uncached_single,
        sc::UNCACHED_P99_BUDGET_MS,
        x.first_render_ms
            .map(|f| format!("; the first render {}", ms(f)))
            .unwrap_or_default(),
    );
    let memory = match (&x.concurrent, x.rss_idle_mb, x.rss_peak_mb) {
        (Some(r), Some(idle), Some(peak)) => {
            let delta = peak - idle;
            Budget {
                name: memory_name.into(),
                target: memory_target,
                measured: format!(
                    "{delta:+.1} MB (idle {idle:.1} MB, peak {peak:.1} MB, read {} times); {} renders, \
                     {} at once: p50 {}, p99 {}{}",
                    x.rss_samples,
                    r.requests,
                    r.connections,
                    ms(r.p50_ms),
                    ms(r.p99_ms),
                    errors_note(&[r])
                ),
                unloaded: String::new(),
                // Renders that failed may not have used the memory they would have.
                verdict: if delta < sc::MEMORY_DELTA_BUDGET_MB && r.errors == 0 && r.requests > 0 {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                },
            }
        }
        (Some(r), _, _) => Budget {
            name: memory_name.into(),
            target: memory_target,
            measured: format!(
                "the server's resident set was not read; {} renders{}",
                r.requests,
                errors_note(&[r])
            ),
            unloaded: String::new(),
            verdict: Verdict::Fail,
        },
        (None, _, _) => Budget {
            name: memory_name.into(),
            target: memory_target,
            measured: format!("not measured{failure}"),
            unloaded: String::new(),
            verdict: Verdict::Fail,
        },
    };
    [cached, uncached, memory]
}

/// The `pdf` phase: the whole space's PDF (the worst of its exports, each on a fresh
/// revision), the server's peak resident set during them, one-page PDFs, and a ready PDF's
/// link against a file download of the same bytes.
pub fn pdf_budgets(e: &EngineReport) -> [Budget; 4] {
    let full_name = format!("PDF of a {}-page space", pd::PAGES);
    let full_target = format!(
        "< {} s from the API call to the whole PDF (worst of {})",
        pd::FULL_BUDGET_S,
        pd::FULL_RENDERS
    );
    let memory_name = format!("memory during the {}-page PDF", pd::PAGES);
    let memory_target = format!("peak RSS < {} MB", pd::RSS_BUDGET_MB);
    let one_name = "one-page PDF, uncached";
    let one_target = format!(
        "p99 < {} ms from the API call to the whole PDF",
        pd::ONE_PAGE_P99_BUDGET_MS
    );
    let cached_name = "cached PDF at file-download speed";
    let cached_target = format!(
        "p99 ≤ {r}× and req/s ≥ 1/{r} of a file download of the same bytes, at {c} conns",
        r = pd::CACHED_RATIO_BUDGET,
        c = pd::CACHED_CONNECTIONS
    );
    let budget = |name: &str, target: &str, measured: String, verdict: Verdict| Budget {
        name: name.into(),
        target: target.into(),
        measured,
        unloaded: String::new(),
        verdict,
    };
    let all = |measured: &str, verdict: Verdict| {
        [
            budget(&full_name, &full_target, measured.into(), verdict.clone()),
            budget(&memory_name, &memory_target, measured.into(), verdict.clone()),
            budget(one_name, &one_target, measured.into(), verdict.clone()),
            budget(cached_name, &cached_target, measured.into(), verdict.clone()),
        ]
    };
    let Some(x) = &e.pdf else {
        return all("-", Verdict::NotRun);
    };
    if x.endpoint_missing {
        return all("-", Verdict::Missing);
    }
    let failure = x
        .failure
        .as_ref()
        .map(|f| format!("; failed: {}", f.replace('|', "/")))
        .unwrap_or_default();
    let all_done = x.full.len() == pd::FULL_RENDERS;
    let full = match x.worst_full() {
        Some(w) => {
            let each: Vec<String> = x.full.iter().map(|f| format!("{:.2} s", f.seconds)).collect();
            budget(
                &full_name,
                &full_target,
                format!(
                    "{:.2} s ({}; {:.2} MB, {} link requests){}",
                    w.seconds,
                    each.join(", "),
                    w.bytes as f64 / 1e6,
                    w.link_requests,
                    if all_done { String::new() } else { failure.clone() }
                ),
                if all_done && w.seconds < pd::FULL_BUDGET_S {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                },
            )
        }
        None => budget(
            &full_name,
            &full_target,
            format!("not measured{failure}"),
            Verdict::Fail,
        ),
    };
    let memory = match (
        x.worst_rss_mb(),
        x.full.iter().find(|f| f.rss_peak_mb == x.worst_rss_mb()),
    ) {
        (Some(peak), Some(f)) => budget(
            &memory_name,
            &memory_target,
            format!(
                "{peak:.1} MB (idle {} before it, {} over; read every {} ms, {} times)",
                f.rss_idle_mb.map_or_else(|| "-".into(), |v| format!("{v:.1} MB")),
                f.rss_delta_mb()
                    .map_or_else(|| "-".into(), |v| format!("{v:+.1} MB")),
                pd::RSS_POLL.as_millis(),
                f.rss_samples
            ),
            if all_done && peak < pd::RSS_BUDGET_MB {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        ),
        _ if !x.full.is_empty() => budget(
            &memory_name,
            &memory_target,
            "the server's resident set was not read".into(),
            Verdict::Fail,
        ),
        _ => budget(
            &memory_name,
            &memory_target,
            format!("not measured{failure}"),
            Verdict::Fail,
        ),
    };
    let one = match &x.one_page {
        Some(r) if r.requests > 0 => budget(
            one_name,
            &one_target,
            format!(
                "p99 {} (p50 {}, max {}; {} PDFs of {} to {} bytes{})",
                ms(r.p99_ms),
                ms(r.p50_ms),
                ms(r.max_ms),
                r.requests,
                x.one_page_bytes_min,
                x.one_page_bytes_max,
                errors_note(&[r])
            ),
            if r.p99_ms < pd::ONE_PAGE_P99_BUDGET_MS && r.errors == 0 {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        ),
        Some(r) => budget(
            one_name,
            &one_target,
            format!("no PDF ({} errors){failure}", r.errors),
            Verdict::Fail,
        ),
        None => budget(
            one_name,
            &one_target,
            format!("not measured{failure}"),
            Verdict::Fail,
        ),
    };
    let cached = if x.cached.is_empty() {
        budget(
            cached_name,
            &cached_target,
            format!("not measured{failure}"),
            Verdict::Fail,
        )
    } else {
        let mut parts: Vec<String> = x
            .cached
            .iter()
            .map(|p| {
                format!(
                    "{} ({} bytes): p99 {} vs {} ({:.2}×), {:.0} vs {:.0} req/s{}",
                    p.what,
                    p.bytes,
                    ms(p.pdf.p99_ms),
                    ms(p.file.p99_ms),
                    p.p99_ratio(),
                    p.pdf.rps,
                    p.file.rps,
                    errors_note(&[&p.pdf, &p.file])
                )
            })
            .collect();
        parts.extend(x.cached_skipped.iter().map(|s| format!("not compared: {s}")));
        budget(
            cached_name,
            &cached_target,
            parts.join("; "),
            if x.cached.iter().all(pd::CachedPair::within_budget) {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        )
    };
    [full, memory, one, cached]
}

/// The `conversations` phase: the data set ingested, analysed and clustered within
/// [`cv::ALL_BUDGET_MS`] of its first POST; one more conversation processed and clustered within
/// [`cv::ONE_BUDGET_MS`] of its POST.
pub fn conversations_budgets(e: &EngineReport) -> [Budget; 2] {
    let all_name = "conversations: ingest, analyse and cluster the data set";
    let all_target = format!(
        "≤ {:.0} s from the first POST until none is left to analyse and every issue is clustered \
         ({} conversations at full scale, {} connections)",
        cv::ALL_BUDGET_MS / 1000.0,
        cv::CONVERSATIONS_FULL,
        cv::INGEST_CONNECTIONS
    );
    let one_name = "conversations: one more";
    let one_target = format!(
        "≤ {:.0} ms from its POST until it is processed and every issue is clustered",
        cv::ONE_BUDGET_MS
    );
    let budget = |name: &str, target: &str, measured: String, verdict: Verdict| Budget {
        name: name.into(),
        target: target.into(),
        measured,
        unloaded: String::new(),
        verdict,
    };
    let Some(x) = &e.conversations else {
        return [
            budget(all_name, &all_target, "-".into(), Verdict::NotRun),
            budget(one_name, &one_target, "-".into(), Verdict::NotRun),
        ];
    };
    if x.endpoint_missing {
        return [
            budget(all_name, &all_target, "-".into(), Verdict::Missing),
            budget(one_name, &one_target, "-".into(), Verdict::Missing),
        ];
    }
    let failure = x
        .failure
        .as_ref()
        .map(|f| format!("; failed: {}", f.replace('|', "/")))
        .unwrap_or_default();
    let seconds = |ms: Option<f64>| ms.map_or_else(|| "-".into(), |v| format!("{:.1} s", v / 1000.0));
    let clustered = x
        .last
        .as_ref()
        .map(|p| format!("; {}", p.describe()))
        .unwrap_or_default();
    let all = match x.all_ms {
        Some(t) => budget(
            all_name,
            &all_target,
            format!(
                "{:.1} s for {} conversations (ingest {:.1} s, {:.0}/s{}; all analysed after {})",
                t / 1000.0,
                x.conversations,
                x.ingest_seconds,
                x.ingest_rate(),
                if x.ingested == x.conversations {
                    String::new()
                } else {
                    format!(", only {} ingested", x.ingested)
                },
                seconds(x.analysed_ms)
            ),
            if x.all_within_budget() {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        ),
        None => budget(
            all_name,
            &all_target,
            format!(
                "{}{clustered}{failure}",
                if x.timed_out {
                    format!("not done after {} s", cv::GIVE_UP.as_secs())
                } else {
                    "not measured".to_string()
                }
            ),
            Verdict::Fail,
        ),
    };
    let one = match x.one_ms {
        Some(t) => budget(
            one_name,
            &one_target,
            format!(
                "{} ({} issue{}{})",
                ms(t),
                x.one_issues,
                if x.one_issues == 1 { "" } else { "s" },
                match x.one_joined_topic {
                    Some(true) => ", in its topic's cluster",
                    Some(false) => ", **not** in its topic's cluster",
                    None => "",
                }
            ),
            if x.one_within_budget() {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        ),
        None => budget(
            one_name,
            &one_target,
            format!("not measured{failure}"),
            Verdict::Fail,
        ),
    };
    [all, one]
}

/// A successful figure of the `writers` phase, or why there is none.
fn writers_figure<'a>(
    w: &'a WritersResult,
    r: Option<&'a FamilyResult>,
    what: &str,
) -> Result<&'a FamilyResult, (String, Verdict)> {
    if w.comments_missing {
        return Err(("-".into(), Verdict::Missing));
    }
    match r {
        Some(r) if r.missing => Err(("-".into(), Verdict::Missing)),
        Some(r) if r.requests > 0 => Ok(r),
        Some(r) => Err((
            format!("{what}: no successful request ({} errors)", r.errors),
            Verdict::Fail,
        )),
        None => Err((
            format!(
                "{what} not measured{}",
                w.failure
                    .as_ref()
                    .map(|f| format!(": the phase failed: {}", f.replace('|', "/")))
                    .unwrap_or_default()
            ),
            Verdict::Fail,
        )),
    }
}

fn errors_note(rs: &[&FamilyResult]) -> String {
    let n: u64 = rs.iter().map(|r| r.errors).sum();
    if n > 0 {
        format!(", {n} errors")
    } else {
        String::new()
    }
}

/// The `writers` phase's budgets: the comment bursts' rates and latency, search after them,
/// the counts; not run when the phase was not in the mix.
pub fn writers_budgets(e: &EngineReport) -> Vec<Budget> {
    let postgres = e.engine == "PostgreSQL";
    let mut specs: Vec<(&str, String)> = vec![
        (
            "comments: one space vs 16 spaces",
            format!(
                "one-space rate ≥ {} of the {}-space rate",
                percent(wr::SAME_SPACE_SHARE),
                wr::WRITERS
            ),
        ),
        (
            "comments on one space (PostgreSQL)",
            format!("≥ {:.0} comments/s", wr::POSTGRES_SAME_SPACE_RPS),
        ),
        (
            "comment creation latency (one space)",
            format!("p99 < {} ms", wr::CREATE_P99_MS),
        ),
    ];
    if !postgres {
        specs.remove(1);
    }
    for conns in wr::SEARCH_CONNECTIONS {
        specs.push((
            if conns == 16 {
                "search after the comment bursts (16 conns)"
            } else {
                "search after the comment bursts (64 conns)"
            },
            format!("rps ≥ {} of before", percent(wr::SEARCH_AFTER_SHARE)),
        ));
    }
    specs.push((
        "comment counts after the bursts",
        "counts exact (before + comments made)".into(),
    ));
    let Some(w) = &e.writers else {
        return specs
            .into_iter()
            .map(|(name, target)| Budget {
                name: name.into(),
                target,
                measured: "-".into(),
                unloaded: String::new(),
                verdict: Verdict::NotRun,
            })
            .collect();
    };
    let mut out = Vec::new();
    for (name, target) in specs {
        let figure: Result<(String, bool), (String, Verdict)> = match name {
            "comments: one space vs 16 spaces" => writers_figure(w, w.same_space.as_ref(), "one-space burst")
                .and_then(|one| {
                    let all = writers_figure(w, w.own_spaces.as_ref(), "own-space burst")?;
                    let ratio = one.rps / all.rps.max(1e-9);
                    Ok((
                        format!(
                            "{} ({:.0} vs {:.0} comments/s{})",
                            percent(ratio),
                            one.rps,
                            all.rps,
                            errors_note(&[one, all])
                        ),
                        ratio >= wr::SAME_SPACE_SHARE && one.errors + all.errors == 0,
                    ))
                }),
            "comments on one space (PostgreSQL)" => {
                writers_figure(w, w.same_space.as_ref(), "one-space burst").map(|one| {
                    (
                        format!(
                            "{:.0} comments/s at {} conns{}",
                            one.rps,
                            one.connections,
                            errors_note(&[one])
                        ),
                        one.rps >= wr::POSTGRES_SAME_SPACE_RPS && one.errors == 0,
                    )
                })
            }
            "comment creation latency (one space)" => {
                writers_figure(w, w.same_space.as_ref(), "one-space burst").map(|one| {
                    (
                        format!(
                            "{} at {} conns (p50 {}){}",
                            ms(one.p99_ms),
                            one.connections,
                            ms(one.p50_ms),
                            errors_note(&[one])
                        ),
                        one.p99_ms < wr::CREATE_P99_MS && one.errors == 0,
                    )
                })
            }
            "comment counts after the bursts" => match w.counts_exact {
                _ if w.comments_missing => Err(("-".into(), Verdict::Missing)),
                Some(exact) => {
                    let wrong = w.counts.iter().filter(|c| !c.exact()).count();
                    let unanswered: u64 = w.counts.iter().map(|c| c.unanswered).sum();
                    Ok((
                        format!(
                            "{} ({} comments made on {} spaces{}{})",
                            if exact { "yes" } else { "no" },
                            w.made(),
                            w.counts.len(),
                            if wrong > 0 {
                                format!("; {wrong} spaces count otherwise")
                            } else {
                                String::new()
                            },
                            if unanswered > 0 {
                                format!("; {unanswered} requests without an answer")
                            } else {
                                String::new()
                            }
                        ),
                        exact,
                    ))
                }
                None => Err((
                    format!(
                        "not checked{}",
                        w.failure
                            .as_ref()
                            .map(|f| format!(": the phase failed: {}", f.replace('|', "/")))
                            .unwrap_or_default()
                    ),
                    Verdict::Fail,
                )),
            },
            _ => {
                let conns = if name.contains("(16 conns)") { 16 } else { 64 };
                writers_figure(w, w.search(false, conns), "search before").and_then(|before| {
                    let after = writers_figure(w, w.search(true, conns), "search after")?;
                    let ratio = after.rps / before.rps.max(1e-9);
                    Ok((
                        format!(
                            "{} ({:.0} vs {:.0} rps; p99 {} vs {}{})",
                            percent(ratio),
                            after.rps,
                            before.rps,
                            ms(after.p99_ms),
                            ms(before.p99_ms),
                            errors_note(&[before, after])
                        ),
                        ratio >= wr::SEARCH_AFTER_SHARE && before.errors + after.errors == 0,
                    ))
                })
            }
        };
        let (measured, verdict) = match figure {
            Ok((m, true)) => (m, Verdict::Pass),
            Ok((m, false)) => (m, Verdict::Fail),
            Err(x) => x,
        };
        out.push(Budget {
            name: name.into(),
            target,
            measured,
            unloaded: String::new(),
            verdict,
        });
    }
    out
}

/// `GET /v1/orgs/{org}/sites/{siteId}/published` of the `sites` phase's visitor-auth site (a
/// visitor token, conditions evaluated): p99 under the limit at 64 connections. The plain
/// site's figures (public, no conditions, no token) and their ratio are shown beside it, so
/// that the cost of the token and the conditions can be read.
pub fn sites_budget(e: &EngineReport) -> Budget {
    let name = "published docs site (visitor token, conditions)".to_string();
    let target = format!("p99 < {} ms at {} conns", si::P99_MS, si::BUDGET_CONNECTIONS);
    let single = match (
        e.single(Family::SitePublished),
        e.single(Family::SitePublishedPlain),
    ) {
        (Some(a), Some(b)) if a.requests > 0 && b.requests > 0 => {
            format!("{} at 1 conn (plain {})", ms(a.p99_ms), ms(b.p99_ms))
        }
        (Some(a), _) if a.requests > 0 => format!("{} at 1 conn", ms(a.p99_ms)),
        _ => String::new(),
    };
    let (measured, verdict) = match (&e.sites, e.result(Family::SitePublished)) {
        (None, None) => ("-".to_string(), Verdict::NotRun),
        (Some(w), _) if w.sites_missing => ("-".to_string(), Verdict::Missing),
        (_, Some(r)) if r.missing => ("-".to_string(), Verdict::Missing),
        (w, None) => (
            format!(
                "not measured{}",
                w.as_ref()
                    .and_then(|w| w.failure.as_ref())
                    .map(|f| format!(": the phase failed: {}", f.replace('|', "/")))
                    .unwrap_or_default()
            ),
            Verdict::Fail,
        ),
        (_, Some(r)) if r.requests == 0 => (
            format!("no successful request ({} errors)", r.errors),
            Verdict::Fail,
        ),
        (_, Some(r)) => {
            let plain = e
                .result(Family::SitePublishedPlain)
                .filter(|p| !p.missing && p.requests > 0);
            let beside = plain
                .map(|p| {
                    format!(
                        "; plain site {} ({} the plain p99; p50 {} vs {}; {:.0} vs {:.0} rps)",
                        ms(p.p99_ms),
                        times(r.p99_ms, p.p99_ms),
                        ms(r.p50_ms),
                        ms(p.p50_ms),
                        r.rps,
                        p.rps
                    )
                })
                .unwrap_or_else(|| "; plain site not measured".into());
            let errors: Vec<&FamilyResult> = std::iter::once(r).chain(plain).collect();
            (
                format!(
                    "{} at {} conns{beside}{}",
                    ms(r.p99_ms),
                    r.connections,
                    errors_note(&errors)
                ),
                if r.p99_ms < si::P99_MS && errors.iter().all(|x| x.errors == 0) {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                },
            )
        }
    };
    Budget {
        name,
        target,
        measured,
        unloaded: single,
        verdict,
    }
}

/// The reader pages of the `sites` phase (issue 21): a page of the 10,000-page space as HTML
/// at 64 connections, p99 under the limit and requests per second at least a share of the
/// reference server's measured in alternating slices with it; and a typical page's HTML,
/// stylesheet and script under the weight limit, uncompressed.
pub fn reader_budgets(e: &EngineReport) -> Vec<Budget> {
    let latency_target = format!(
        "p99 < {} ms at {} conns",
        si::READER_P99_MS,
        si::BUDGET_CONNECTIONS
    );
    let ratio_target = format!(
        "≥ {} of the reference's rps (measured alongside)",
        percent(si::READER_MIN_RATIO)
    );
    let weight_target = format!(
        "HTML + CSS + JS < {} KB uncompressed, images excluded",
        si::PAGE_WEIGHT_LIMIT / 1000
    );
    let names = [
        "reader page of the 10,000-page space: latency",
        "reader page of the 10,000-page space: throughput",
        "reader page weight (a typical page of the 10,000-page space)",
    ];
    let targets = [latency_target, ratio_target, weight_target];
    let all = |measured: String, verdict: Verdict| -> Vec<Budget> {
        names
            .iter()
            .zip(&targets)
            .map(|(name, target)| Budget {
                name: (*name).into(),
                target: target.clone(),
                measured: measured.clone(),
                unloaded: String::new(),
                verdict: verdict.clone(),
            })
            .collect()
    };
    let reader = match &e.sites {
        None => return all("-".into(), Verdict::NotRun),
        Some(x) if x.sites_missing => return all("-".into(), Verdict::Missing),
        Some(x) => match (&x.reader, &x.failure) {
            (Some(r), _) => r,
            (None, failure) => {
                return all(
                    format!(
                        "not measured: the phase failed{}",
                        failure
                            .as_ref()
                            .map(|f| format!(": {}", f.replace('|', "/")))
                            .unwrap_or_default()
                    ),
                    Verdict::Fail,
                );
            }
        },
    };
    let unloaded = e
        .single(Family::ReaderPage)
        .filter(|r| !r.missing && r.requests > 0)
        .map(|r| format!("{} at 1 conn", ms(r.p99_ms)))
        .unwrap_or_default();
    let failed = reader
        .failure
        .as_ref()
        .map(|f| format!("not measured: the reader pages failed: {}", f.replace('|', "/")));
    let mut out = Vec::new();
    match (e.result(Family::ReaderPage), &failed) {
        (Some(r), _) if r.requests > 0 => {
            out.push(Budget {
                name: names[0].into(),
                target: targets[0].clone(),
                measured: format!(
                    "{} at {} conns (p50 {}){}",
                    ms(r.p99_ms),
                    r.connections,
                    ms(r.p50_ms),
                    errors_note(&[r])
                ),
                unloaded,
                verdict: if r.p99_ms < si::READER_P99_MS && r.errors == 0 {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                },
            });
            let (reference, beside) = match &reader.reference {
                Some(b) if b.rps > 0.0 => (b.rps, " measured alongside"),
                _ => (e.reference_rps(), " before and after"),
            };
            let ratio = r.rps / reference.max(1e-9);
            out.push(Budget {
                name: names[1].into(),
                target: targets[1].clone(),
                measured: format!(
                    "{} ({:.0} of {:.0} rps{beside})",
                    percent(ratio),
                    r.rps,
                    reference
                ),
                unloaded: String::new(),
                verdict: if ratio >= si::READER_MIN_RATIO && r.errors == 0 {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                },
            });
        }
        (r, failed) => {
            let measured = match (r, failed) {
                (_, Some(f)) => f.clone(),
                (Some(r), None) => format!("no successful request ({} errors)", r.errors),
                (None, None) => "not measured".into(),
            };
            for (name, target) in names.iter().zip(&targets).take(2) {
                out.push(Budget {
                    name: (*name).into(),
                    target: target.clone(),
                    measured: measured.clone(),
                    unloaded: String::new(),
                    verdict: Verdict::Fail,
                });
            }
        }
    }
    let (measured, verdict) = match &reader.weight {
        Some(w) => (
            format!(
                "{} bytes: HTML {} ({} gzip{}), CSS {} ({} gzip), JS {} ({} gzip); {} bytes gzip in all; {} sidebar entries",
                w.total(),
                w.html_bytes,
                w.html_gzip_bytes,
                if w.served_gzip {
                    ", as served"
                } else {
                    ", computed: served uncompressed"
                },
                w.css_bytes,
                w.css_gzip_bytes,
                w.js_bytes,
                w.js_gzip_bytes,
                w.total_gzip(),
                w.sidebar_entries
            ),
            if w.total() < si::PAGE_WEIGHT_LIMIT {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        ),
        None => (failed.unwrap_or_else(|| "not measured".into()), Verdict::Fail),
    };
    out.push(Budget {
        name: names[2].into(),
        target: targets[2].clone(),
        measured,
        unloaded: String::new(),
        verdict,
    });
    out
}

/// `GET /v1/spaces/{id}/comments` page 1 (limit 100) at 64 connections: the `writers` phase's
/// measurement, or the `list-comments-p1` phase's when the run had it at that concurrency.
pub fn list_comments_budget(e: &EngineReport) -> Budget {
    let name = format!(
        "`GET /v1/spaces/{{spaceId}}/comments` (limit {}) at {} conns",
        wr::LIST_LIMIT,
        wr::LIST_CONNECTIONS
    );
    let target = format!("p99 < {} ms", wr::LIST_P99_MS);
    let unloaded = e
        .single(Family::ListCommentsP1)
        .filter(|r| !r.missing && r.requests > 0)
        .map(|r| format!("{} at 1 conn", ms(r.p99_ms)))
        .unwrap_or_default();
    let phase = e
        .results
        .iter()
        .find(|r| r.family == Family::ListCommentsP1.name() && r.connections == wr::LIST_CONNECTIONS);
    let (source, r) = match (e.writers.as_ref().and_then(|w| w.list_comments.as_ref()), phase) {
        (Some(r), _) => ("writers phase", r),
        (None, Some(r)) => ("list-comments-p1 phase", r),
        (None, None) => {
            let (measured, verdict) = match &e.writers {
                Some(w) if w.comments_missing => ("-".to_string(), Verdict::Missing),
                Some(w) if w.failure.is_some() => (
                    format!(
                        "not measured: the writers phase failed: {}",
                        w.failure.clone().unwrap_or_default().replace('|', "/")
                    ),
                    Verdict::Fail,
                ),
                _ => ("-".to_string(), Verdict::NotRun),
            };
            return Budget {
                name,
                target,
                measured,
                unloaded,
                verdict,
            };
        }
    };
    let (measured, verdict) = if r.missing {
        ("-".to_string(), Verdict::Missing)
    } else if r.requests == 0 {
        (
            format!("no successful request ({} errors)", r.errors),
            Verdict::Fail,
        )
    } else {
        (
            format!("{} ({}; {source}){}", ms(r.p99_ms), r.detail, errors_note(&[r])),
            if r.p99_ms < wr::LIST_P99_MS && r.errors == 0 {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        )
    };
    Budget {
        name,
        target,
        measured,
        unloaded,
        verdict,
    }
}

/// Budgets as plain text, for the progress output.
pub fn budget_lines(budgets: &[Budget]) -> String {
    let mut s = String::new();
    for b in budgets {
        s += &format!(
            "budget {}: {} -> {} [{}]\n",
            b.name,
            b.target,
            b.measured,
            b.verdict.text().trim_matches('*')
        );
    }
    s
}

pub fn budgets(e: &EngineReport) -> Vec<Budget> {
    let mut out = Vec::new();
    let reference = e.reference_rps();
    let postgres = e.engine == "PostgreSQL";
    let need = if postgres { 0.10 } else { 0.25 };
    if let Some(r) = e.result(Family::GetSpace) {
        // Against the reference measured in the same moments when there is one.
        let (reference, beside) = match &e.reference_beside_get_space {
            Some(b) if b.rps > 0.0 => (b.rps, " measured alongside"),
            _ => (reference, ""),
        };
        let ratio = r.rps / reference.max(1e-9);
        out.push(Budget {
            name: "get-space throughput".into(),
            target: format!(
                "≥ {} of the reference's rps{}",
                percent(need),
                if postgres { " (goal)" } else { "" }
            ),
            measured: format!(
                "{} ({:.0} of {:.0} rps{beside})",
                percent(ratio),
                r.rps,
                reference
            ),
            unloaded: String::new(),
            verdict: if ratio >= need && r.errors == 0 && !r.missing {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
        });
    }
    out.push(latency_budget(
        e,
        Family::GetSpace,
        "get-space latency",
        "p99",
        10.0,
    ));
    out.push(list_budget(
        e,
        Family::ListCommentsP1,
        Family::ListCommentsP50,
        "10,000-item list: page 1 vs page 50",
    ));
    out.push(list_budget(
        e,
        Family::ListSpacesP1,
        Family::ListSpacesDeep,
        "spaces list: page 1 vs deep page",
    ));
    out.push(latency_budget(
        e,
        Family::PageTree,
        "page tree (10,000 pages)",
        "p50",
        50.0,
    ));
    out.push(latency_budget(
        e,
        Family::PageMarkdown,
        "one page as markdown",
        "p99",
        10.0,
    ));
    out.push(latency_budget(
        e,
        Family::SearchOneWord,
        "search, one word",
        "p99",
        30.0,
    ));
    out.push(latency_budget(
        e,
        Family::ContentBatch,
        "one-page content batch",
        "p50",
        30.0,
    ));
    out.push(latency_budget(e, Family::Merge, "one-page merge", "p50", 100.0));
    out.push(list_comments_budget(e));
    out.push(sites_budget(e));
    out.extend(reader_budgets(e));
    out.extend(writers_budgets(e));
    out.extend(openapi_budgets(e));
    out.extend(events_budgets(e));
    out.extend(scripts_budgets(e));
    out.extend(pdf_budgets(e));
    out.extend(conversations_budgets(e));
    out.extend(pathological_budgets(e));
    let m = &e.memory;
    out.push(Budget {
        name: "memory under load".into(),
        target: "peak RSS < 200 MB".into(),
        measured: format!("{:.1} MB", m.peak_under_load_mb),
        unloaded: String::new(),
        // `--mix pathological` alone runs none of the ordinary phases.
        verdict: if m.peak_under_load_mb == 0.0 && m.per_phase_mb.is_empty() {
            Verdict::NotRun
        } else if m.peak_under_load_mb < 200.0 {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
    });
    out.push(Budget {
        name: "memory idle after start".into(),
        target: "RSS < 40 MB".into(),
        measured: format!("{:.1} MB", m.idle_after_start_mb),
        unloaded: String::new(),
        verdict: if m.idle_after_start_mb < 40.0 {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
    });
    out
}

pub fn markdown(report: &RunReport) -> String {
    let mut s = String::new();
    let m = &report.machine;
    let st = &report.settings;
    let _ = writeln!(s, "# quire benchmark report\n");
    if st.smoke {
        let _ = writeln!(
            s,
            "> **Smoke run, not a measurement.** Small dataset and/or short phases on a shared machine: \
             these figures only prove that the tools work end to end.\n"
        );
    }
    let _ = writeln!(
        s,
        "Written by `quire-bench run` (see `bench/README.md`). Every figure is also given as a ratio to \
         the reference server measured in the same run on the same machine, because absolute figures \
         drift on a shared machine.\n"
    );
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| date | {} |", report.date);
    let _ = writeln!(s, "| commit | `{}` |", m.commit);
    let _ = writeln!(
        s,
        "| machine | {} CPUs ({}), {} MB memory, Linux {} |",
        m.cpus, m.cpu_model, m.memory_mb, m.kernel
    );
    let _ = writeln!(s, "| load average before the run | {} |", m.load_average_before);
    let _ = writeln!(
        s,
        "| phases | {} s each after {} s warm-up; reads at {} connections, writes at {}; \
         unloaded pass {} s at 1 connection |",
        st.duration_s, st.warmup_s, st.connections, st.write_connections, st.latency_duration_s
    );
    let _ = writeln!(s, "| dataset scale | {} |", st.scale);
    let _ = writeln!(s, "| server log level | `RUST_LOG={}` |", st.server_log);
    let _ = writeln!(
        s,
        "| driver | closed loop: each connection sends the next request when the answer has been read; \
         the driver and the server share the machine |\n"
    );
    for e in &report.engines {
        engine(&mut s, e);
    }
    s
}

fn engine(s: &mut String, e: &EngineReport) {
    let _ = writeln!(s, "## {}\n", e.engine);
    let d = &e.dataset;
    let _ = writeln!(s, "### Dataset\n");
    let _ = writeln!(
        s,
        "{} organization(s), {} spaces, {} pages in the big space ({:.1} MB of markdown, {} links), \
         {} change requests ({} merged, {} open), {} comments and {} replies ({} resolved), {} members; \
         made through the API in {:.1} s.\n",
        d.orgs,
        d.spaces,
        d.pages_big_space,
        d.markdown_bytes as f64 / 1e6,
        d.links,
        d.change_requests,
        d.change_requests_merged,
        d.change_requests_open,
        d.comments,
        d.replies,
        d.comments_resolved,
        d.members,
        d.seconds
    );
    let steps: Vec<String> = d.steps.iter().map(|(n, t)| format!("{n} {t:.1} s")).collect();
    let _ = writeln!(s, "Steps: {}.\n", steps.join(", "));
    for skipped in &d.skipped {
        let _ = writeln!(s, "- not made: {skipped}");
    }
    if !d.skipped.is_empty() {
        let _ = writeln!(s);
    }
    let rb = &e.reference_before;
    let ra = &e.reference_after;
    let reference = e.reference_rps();
    let _ = writeln!(s, "### Reference server\n");
    let _ = writeln!(
        s,
        "A bare axum server answering a precomputed {}-byte JSON body (the size of a space's JSON) at {} \
         connections: {:.0} rps before quire's phases, {:.0} rps after (drift {:+.1}%); p50 {}, p99 {}. \
         Ratios below use the mean, {:.0} rps.\n",
        e.space_json_bytes,
        rb.connections,
        rb.rps,
        ra.rps,
        if rb.rps > 0.0 {
            (ra.rps / rb.rps - 1.0) * 100.0
        } else {
            0.0
        },
        ms(rb.p50_ms),
        ms(rb.p99_ms),
        reference
    );
    if let Some(b) = &e.reference_beside_get_space {
        let _ = writeln!(
            s,
            "Measured again in alternating slices with get-space ({} of each), for that family's \
             budget: {:.0} rps, p50 {}, p99 {}.\n",
            crate::load::ALTERNATING_ROUNDS,
            b.rps,
            ms(b.p50_ms),
            ms(b.p99_ms)
        );
    }
    let _ = writeln!(s, "### Figures\n");
    let _ = writeln!(
        s,
        "| family | conns | rps | % of reference rps | p50 | p99 | max | p50 / ref p50 | p99 / ref p99 | errors | what |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|");
    let (ref_p50, ref_p99) = ((rb.p50_ms + ra.p50_ms) / 2.0, (rb.p99_ms + ra.p99_ms) / 2.0);
    for r in &e.results {
        row(s, r, reference, ref_p50, ref_p99);
    }
    let _ = writeln!(s);
    if !e.single.is_empty() {
        let (sr, s50, s99) = e
            .reference_single
            .as_ref()
            .map(|r| (r.rps, r.p50_ms, r.p99_ms))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "Reads on one connection (latency without queueing; reference: {sr:.0} rps, p50 {}):\n",
            ms(s50)
        );
        let _ = writeln!(
            s,
            "| family | conns | rps | % of reference rps | p50 | p99 | max | p50 / ref p50 | p99 / ref p99 | errors | what |"
        );
        let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|");
        for r in &e.single {
            row(s, r, sr, s50, s99);
        }
        let _ = writeln!(s);
    }
    let errors: Vec<&FamilyResult> = e
        .results
        .iter()
        .chain(e.single.iter())
        .filter(|r| r.errors > 0)
        .collect();
    if !errors.is_empty() {
        let _ = writeln!(s, "Errors:\n");
        for r in errors {
            for sample in &r.error_samples {
                let _ = writeln!(
                    s,
                    "- {} ({} conns): `{}`",
                    r.family,
                    r.connections,
                    sample.replace('`', "'")
                );
            }
        }
        let _ = writeln!(s);
    }
    if !e.server_errors.is_empty() {
        let _ = writeln!(s, "Server log errors (first few):\n");
        for l in &e.server_errors {
            let _ = writeln!(s, "- `{}`", l.replace('`', "'"));
        }
        let _ = writeln!(s);
    }
    if let Some(x) = &e.sites {
        sites(s, x, e);
    }
    if let Some(w) = &e.writers {
        writers(s, w);
    }
    if let Some(o) = &e.openapi {
        openapi(s, o);
    }
    if let Some(x) = &e.events {
        events(s, x);
    }
    if let Some(x) = &e.scripts {
        scripts(s, x);
    }
    if let Some(x) = &e.pdf {
        pdf(s, x);
    }
    if let Some(x) = &e.conversations {
        conversations(s, x);
    }
    if let Some(p) = &e.pathological {
        pathological(s, p);
    }
    let _ = writeln!(s, "### Budgets\n");
    let _ = writeln!(s, "| budget | target | measured | unloaded | verdict |");
    let _ = writeln!(s, "|---|---|---|---|---|");
    let budgets = budgets(e);
    for b in &budgets {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            b.name,
            b.target,
            b.measured,
            b.unloaded,
            b.verdict.text()
        );
    }
    let _ = writeln!(s);
    if budgets.iter().any(|b| b.verdict == Verdict::Fail) {
        let _ = writeln!(
            s,
            "Why a budget fails, with the profiles that show it, is in `bench/ANALYSIS.md` \
             (written by hand for the commit it names; profile again if the code moved on).\n"
        );
    }
    let m = &e.memory;
    let _ = writeln!(s, "### Memory (server resident set)\n");
    let _ = writeln!(
        s,
        "Idle after start {:.1} MB; idle after the dataset {:.1} MB; peak under load {:.1} MB.\n",
        m.idle_after_start_mb, m.idle_after_gen_mb, m.peak_under_load_mb
    );
    if !m.per_phase_mb.is_empty() {
        let phases: Vec<String> = m
            .per_phase_mb
            .iter()
            .map(|(n, v)| format!("{n} {v:.0}"))
            .collect();
        let _ = writeln!(s, "Peak per phase (MB): {}.\n", phases.join(", "));
    }
}

fn sites(s: &mut String, x: &SitesResult, e: &EngineReport) {
    let _ = writeln!(s, "### Docs sites (`sites`)\n");
    if x.sites_missing {
        let _ = writeln!(s, "n/a (endpoint missing): the server has no docs site routes.\n");
        return;
    }
    let _ = writeln!(
        s,
        "Two sites of organization `{}`, built through the API and published in {:.1} s{}: {} sections \
         in {} section groups, {} site spaces (the big space is the first section's; the others are \
         the organization's other spaces). `{}`: visibility `visitor-auth`, an adaptive schema (a \
         boolean claim `isBeta`, an enum claim `plan`), conditions on some sections and site spaces, \
         read with a visitor token (HS256 with the site's key, `aud` the site, claims `isBeta: true, \
         plan: pro`) for which every condition holds, so that it shows what the plain site shows \
         (another visitor, `isBeta: false, plan: free`, sees less: the conditions apply). `{}`: the \
         same structure, `public`, no schema or conditions, read without a token. Both are measured \
         in alternating slices ({} of each), so their ratio does not depend on which ran while the \
         machine was busy; the difference is what the token check and the condition evaluation cost \
         (the rendered body is cached per site and per set of shown items either way). Server peak \
         RSS during the phase: {:.1} MB.\n",
        x.org,
        x.setup_seconds,
        if x.spaces_made > 0 {
            format!(" ({} spaces made for it: the dataset had fewer)", x.spaces_made)
        } else {
            String::new()
        },
        si::SECTIONS,
        si::GROUPS,
        si::SITE_SPACES,
        si::SITE_PUBLISHED,
        si::SITE_PUBLISHED_PLAIN,
        crate::load::ALTERNATING_ROUNDS,
        x.peak_rss_mb
    );
    if let Some(f) = &x.failure {
        let _ = writeln!(s, "**The phase failed:** `{}`\n", f.replace('`', "'"));
    }
    let _ = writeln!(
        s,
        "| site | visibility | sections | groups | site spaces | conditions (sections + site spaces) | shown: sections | shown: site spaces | body | the other visitor sees |"
    );
    let _ = writeln!(s, "|---|---|--:|--:|--:|--:|--:|--:|--:|---|");
    for m in x.adaptive.iter().chain(&x.plain) {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} + {} | {} | {} | {:.1} KB | {} |",
            m.id,
            m.visibility,
            m.sections,
            m.groups,
            m.site_spaces,
            m.section_conditions,
            m.site_space_conditions,
            m.shown_sections,
            m.shown_site_spaces,
            m.body_bytes as f64 / 1024.0,
            m.other_visitor_shown
                .map(|(a, b)| format!("{a} sections, {b} site spaces"))
                .unwrap_or_else(|| "-".into())
        );
    }
    let _ = writeln!(s);
    if let Some(r) = &x.reader {
        reader(s, r);
    }
    let reference = x.reader.as_ref().and_then(|r| r.reference.as_ref());
    let rows: Vec<&FamilyResult> = [
        Family::SitePublished,
        Family::SitePublishedPlain,
        Family::ReaderPage,
    ]
    .iter()
    .flat_map(|f| e.result(*f).into_iter().chain(e.single(*f)))
    .chain(reference)
    .collect();
    if !rows.is_empty() {
        let _ = writeln!(s, "| family | conns | rps | p50 | p99 | max | errors |");
        let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|");
        for r in rows {
            let _ = writeln!(
                s,
                "| {} | {} | {:.0} | {} | {} | {} | {} |",
                r.family,
                r.connections,
                r.rps,
                ms(r.p50_ms),
                ms(r.p99_ms),
                ms(r.max_ms),
                r.errors
            );
        }
        let _ = writeln!(s);
    }
}

/// The reader pages of the `sites` phase: what was read and what a typical page weighs.
fn reader(s: &mut String, r: &ReaderResult) {
    let depths: Vec<String> = r
        .depths
        .iter()
        .enumerate()
        .map(|(d, n)| format!("{n} at depth {}", d + 1))
        .collect();
    let _ = writeln!(
        s,
        "Reader pages (`{}`): the big space's pages as a visitor's browser reads them on the plain \
         site, `GET {}{{page path}}` (HTML, no token, gzip accepted), each request one of {} of \
         its {} pages at random ({}), in alternating slices with the reference server ({} of \
         each; the last row below), whose requests per second are the throughput budget's \
         yardstick.\n",
        si::READER_PAGE,
        r.root,
        r.pages_read,
        r.space_pages,
        depths.join(", "),
        crate::load::ALTERNATING_ROUNDS
    );
    if let Some(w) = &r.weight {
        let _ = writeln!(
            s,
            "A typical page (depth {}, `{}`): HTML {} bytes ({} gzip{}), stylesheet {} ({} gzip), \
             script {} ({} gzip): {} bytes in all, {} gzip; its sidebar has {} entries (collapsed \
             levels are loaded on demand from `~nav/`).\n",
            w.depth,
            w.url,
            w.html_bytes,
            w.html_gzip_bytes,
            if w.served_gzip {
                ", as served"
            } else {
                ", computed: served uncompressed"
            },
            w.css_bytes,
            w.css_gzip_bytes,
            w.js_bytes,
            w.js_gzip_bytes,
            w.total(),
            w.total_gzip(),
            w.sidebar_entries
        );
    }
    if let Some(f) = &r.failure {
        let _ = writeln!(s, "**The reader pages failed:** `{}`\n", f.replace('`', "'"));
    }
}

fn writers(s: &mut String, w: &WritersResult) {
    let _ = writeln!(s, "### Writers (`writers`)\n");
    if w.comments_missing {
        let _ = writeln!(s, "n/a (endpoint missing): the server has no comment routes.\n");
        return;
    }
    let _ = writeln!(
        s,
        "Two bursts of {n} connections posting short comments (a markdown body, no page): all on the \
         big space, then each connection on its own space ({spaces} spaces: the big space and the next \
         ones of the dataset{made}). Space search (`search-one-word`) at {c} connections before the \
         bursts and again after them. Every step runs the warm-up then the phase duration. Server peak \
         RSS during the phase: {rss:.1} MB.\n",
        n = wr::WRITERS,
        spaces = w.spaces.len(),
        made = if w.spaces_made > 0 {
            format!(", {} of them made by the phase", w.spaces_made)
        } else {
            String::new()
        },
        c = wr::SEARCH_CONNECTIONS
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" and "),
        rss = w.peak_rss_mb
    );
    if let Some(f) = &w.failure {
        let _ = writeln!(s, "**The phase failed:** `{}`\n", f.replace('`', "'"));
    }
    let _ = writeln!(
        s,
        "| step | family | conns | rps | p50 | p99 | max | errors | what |"
    );
    let _ = writeln!(s, "|---|---|--:|--:|--:|--:|--:|--:|---|");
    let steps = w
        .search_before
        .iter()
        .map(|r| ("before the bursts", r))
        .chain(w.same_space.iter().map(|r| ("burst: one space", r)))
        .chain(w.own_spaces.iter().map(|r| ("burst: own spaces", r)))
        .chain(w.search_after.iter().map(|r| ("after the bursts", r)))
        .chain(w.list_comments.iter().map(|r| ("after the bursts", r)));
    let mut errors = Vec::new();
    for (step, r) in steps {
        let _ = writeln!(
            s,
            "| {step} | {} | {} | {:.0} | {} | {} | {} | {} | {} |",
            r.family,
            r.connections,
            r.rps,
            ms(r.p50_ms),
            ms(r.p99_ms),
            ms(r.max_ms),
            r.errors,
            r.detail
        );
        errors.extend(r.error_samples.iter().map(|e| {
            format!(
                "- {} ({} conns): `{}`",
                r.family,
                r.connections,
                e.replace('`', "'")
            )
        }));
    }
    let _ = writeln!(s);
    if !errors.is_empty() {
        let _ = writeln!(s, "Errors:\n\n{}\n", errors.join("\n"));
    }
    match w.counts_exact {
        Some(exact) => {
            let _ = writeln!(
                s,
                "Counts exact: **{}**. Each space's open comments (`comments` of `GET /v1/spaces/{{id}}`) \
                 and the size of its comment list (`count` of `GET /v1/spaces/{{id}}/comments`), read \
                 before the searches and after the bursts (with the administrator's token / a writer's), \
                 against the comments answered 2xx (warm-up included):\n",
                if exact { "yes" } else { "no" }
            );
            let _ = writeln!(
                s,
                "| space | comments made | unanswered | open before | open after | list count before | list count after | exact |"
            );
            let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|---|");
            for c in &w.counts {
                let _ = writeln!(
                    s,
                    "| `{}` | {} | {} | {} | {} / {} | {} | {} / {} | {} |",
                    c.space,
                    c.made,
                    c.unanswered,
                    c.open_before,
                    c.open_after,
                    c.open_after_writer,
                    c.listed_before,
                    c.listed_after,
                    c.listed_after_writer,
                    if c.exact() { "yes" } else { "**no**" }
                );
            }
            let _ = writeln!(s);
        }
        None => {
            let _ = writeln!(s, "Counts not checked.\n");
        }
    }
}

fn openapi(s: &mut String, o: &OpenApiResult) {
    let _ = writeln!(s, "### OpenAPI reference (`openapi`)\n");
    if o.description_missing {
        let _ = writeln!(
            s,
            "n/a (input missing): GitBook's description `{}` is not there (`bash .ci/gitbook-api` \
             fetches it with npm).\n",
            o.description
        );
        return;
    }
    if o.endpoint_missing {
        let _ = writeln!(
            s,
            "n/a (endpoint missing): the server has no OpenAPI specification routes.\n"
        );
        return;
    }
    let _ = writeln!(
        s,
        "GitBook's own description (`{}`: {:.2} MB of JSON, {} operations, {} schemas, {} tags), \
         served by the bench at `{}` (quire started with `QUIRE_OUTBOUND_ALLOW=127.0.0.1`). {} \
         specifications of organization `{}` were created from it one after another, each timed from \
         just before `POST /v1/orgs/{{org}}/openapi` to the first `GET .../openapi/{{slug}}` showing \
         `processingState: complete` (polled every {} ms; the job runner looks for due jobs every \
         500 ms when idle, so up to that is waiting). The bench's server answered {} fetches. Server \
         peak RSS during the phase: {:.1} MB (not in the memory budget){}.\n",
        o.description,
        o.description_bytes as f64 / 1e6,
        o.operations,
        o.schemas,
        o.tags,
        o.source_url,
        oa::SPECS,
        o.org,
        oa::POLL.as_millis(),
        o.fetches,
        o.peak_rss_mb,
        if o.peak_rss_processing_mb + o.peak_rss_generation_mb + o.peak_rss_reads_mb > 0.0 {
            format!(
                ": {:.1} MB processing the specifications, {:.1} MB from the merge to the pages \
                 listed (the pages job), {:.1} MB reading the pages",
                o.peak_rss_processing_mb, o.peak_rss_generation_mb, o.peak_rss_reads_mb
            )
        } else {
            String::new()
        }
    );
    if let Some(f) = &o.failure {
        let _ = writeln!(s, "**The phase failed:** `{}`\n", f.replace('`', "'"));
    }
    if !o.specs.is_empty() {
        let _ = writeln!(
            s,
            "| specification | create answered | complete after | polls | saw `progress` | result |"
        );
        let _ = writeln!(s, "|---|--:|--:|--:|---|---|");
        for x in &o.specs {
            let result = if x.ok {
                format!("version `{}`", x.version.as_deref().unwrap_or("-"))
            } else {
                format!(
                    "**{}** {}",
                    x.error_code.as_deref().unwrap_or("no version"),
                    x.errors.join("; ")
                )
                .replace('|', "/")
                .replace('`', "'")
            };
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} | {} |",
                x.slug,
                ms(x.create_ms),
                ms(x.complete_ms),
                x.polls,
                if x.saw_progress { "yes" } else { "no" },
                result
            );
        }
        let _ = writeln!(s);
    }
    if let (Some(space), Some(merge)) = (&o.space, o.merge_ms) {
        let _ = writeln!(
            s,
            "A computed page (`builtin:openapi`, the first specification, `models: true`) inserted \
             into a fresh space `{space}` through a change request and merged: the merge answered in \
             {}; the generated pages were listed by `GET /v1/spaces/{{space}}/content` {} after the \
             merge request was sent ({} listings polled; not budgeted){}.\n",
            ms(merge),
            o.pages_visible_ms.map(ms).unwrap_or_else(|| "-".into()),
            o.pages_polls,
            match o.seed_matches {
                Some(true) => "; the computed page's `computedSeed` is the specification's version",
                Some(false) => "; **the computed page's `computedSeed` is not the specification's version**",
                None => "",
            }
        );
    }
    if let Some(p) = o.slowest_page() {
        let too_large = o.pages.iter().filter(|p| p.too_large).count();
        let _ = writeln!(
            s,
            "Each of the {} generated pages read with `GET /v1/spaces/{{space}}/content/page/{{id}}?format=markdown` \
             (the administrator's token, gzip accepted), one request at a time: once cold (its first \
             read), then once warm. Cold: worst {} (`{}`, {:.1} KB of markdown), median {}. Warm: worst \
             {}, median {}. Markdown: {:.1} KB in all, the largest page {:.1} KB{}.\n",
            o.pages.len(),
            ms(p.cold_ms),
            p.title.replace('`', "'"),
            p.markdown_bytes as f64 / 1024.0,
            ms(o.cold_median_ms()),
            o.warm_max_ms().map(ms).unwrap_or_else(|| "-".into()),
            ms(o.warm_median_ms()),
            o.pages.iter().map(|p| p.markdown_bytes).sum::<usize>() as f64 / 1024.0,
            o.pages.iter().map(|p| p.markdown_bytes).max().unwrap_or(0) as f64 / 1024.0,
            if too_large > 0 {
                format!("; **{too_large} pages were too large and replaced by a note**")
            } else {
                String::new()
            }
        );
        let _ = writeln!(s, "| page | path | markdown | as sent | cold | warm | error |");
        let _ = writeln!(s, "|---|---|--:|--:|--:|--:|---|");
        for p in &o.pages {
            let _ = writeln!(
                s,
                "| {} | `{}` | {:.1} KB | {:.1} KB{} | {} | {} | {} |",
                p.title.replace('|', "/"),
                p.path,
                p.markdown_bytes as f64 / 1024.0,
                p.answer_bytes as f64 / 1024.0,
                if p.gzipped { " gzip" } else { "" },
                ms(p.cold_ms),
                p.warm_ms.map(ms).unwrap_or_else(|| "-".into()),
                p.error
                    .as_deref()
                    .map(|e| e.replace('|', "/").replace('`', "'"))
                    .unwrap_or_default()
            );
        }
        let _ = writeln!(s);
    }
}

fn events(s: &mut String, x: &EventsResult) {
    let _ = writeln!(s, "### Integration events (`events`)\n");
    if x.endpoint_missing {
        let _ = writeln!(
            s,
            "n/a (endpoint missing): the server has no integration routes.\n"
        );
        return;
    }
    let _ = writeln!(
        s,
        "Merges into the big space at {w} connections (each: a change request rewriting one of the \
         connection's pages, untimed, then `POST …/merge`, timed), first with no integration, then \
         with integration `{name}` (scope `{scope}`) published in organization `{org}`, its dev tunnel \
         the bench's receiver `{url}` (it records each POST and answers 200 at once), installed there \
         with every space (`space_selection: all`). Each merge's delivery latency is from the \
         arrival of its answer to the receipt of the `{cu}` whose `revisionId` is the answer's \
         `revision`: the commit comes before the answer, so this understates the time from the \
         commit ({before} events arrived before their merge's answer and count 0); the time from the \
         request's sending, which overstates it, is beside it. After the load the phase waits up \
         to {settle} s for every merge's event, then until the integration's events list nothing \
         `pending`; then it unpublishes the integration. Server peak RSS during the phase: \
         {rss:.1} MB.\n",
        w = ev::WRITERS,
        name = x.integration,
        scope = ev::SCOPE,
        org = x.org,
        url = x.receiver_url,
        cu = ev::CONTENT_UPDATED,
        before = x.before_answer,
        settle = ev::SETTLE_TIMEOUT.as_secs(),
        rss = x.peak_rss_mb
    );
    if let Some(f) = &x.failure {
        let _ = writeln!(s, "**The phase failed:** `{}`\n", f.replace('`', "'"));
    }
    let _ = writeln!(s, "| merges | conns | merges/s | p50 | p99 | max | errors |");
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|");
    let mut errors = Vec::new();
    for (step, r) in [
        ("no integration", &x.baseline),
        ("integration installed", &x.with_integration),
    ] {
        let Some(r) = r else { continue };
        let _ = writeln!(
            s,
            "| {step} | {} | {:.1} | {} | {} | {} | {} |",
            r.connections,
            r.rps,
            ms(r.p50_ms),
            ms(r.p99_ms),
            ms(r.max_ms),
            r.errors
        );
        errors.extend(
            r.error_samples
                .iter()
                .map(|e| format!("- {step}: `{}`", e.replace('`', "'"))),
        );
    }
    let _ = writeln!(s);
    if !errors.is_empty() {
        let _ = writeln!(s, "Errors:\n\n{}\n", errors.join("\n"));
    }
    let _ = writeln!(
        s,
        "| delivery of `{}` | merges | p50 | p90 | p99 | max | mean |",
        ev::CONTENT_UPDATED
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|");
    let line = |s: &mut String, what: &str, l: &Option<Latency>| {
        let _ = match l {
            Some(l) => writeln!(
                s,
                "| {what} | {} | {} | {} | {} | {} | {} |",
                l.count,
                ms(l.p50_ms),
                ms(l.p90_ms),
                ms(l.p99_ms),
                ms(l.max_ms),
                ms(l.mean_ms)
            ),
            None => writeln!(s, "| {what} | 0 | - | - | - | - | - |"),
        };
    };
    line(s, "merge answered → received", &x.delivery);
    line(s, "merge sent → received", &x.delivery_from_sent);
    let _ = writeln!(s);
    let types: Vec<String> = x.by_type.iter().map(|(k, v)| format!("`{k}` {v}")).collect();
    let _ = writeln!(
        s,
        "Expected: the `{}` of {} merges (the warm-up's included); received {}{}{}. The receiver \
         answered {} POSTs, {} distinct events ({}){}. {}\n",
        ev::CONTENT_UPDATED,
        x.expected,
        x.received,
        x.all_received_ms
            .map(|t| format!(", the last {} after the load ended", ms(t)))
            .unwrap_or_default(),
        if x.missing_revisions.is_empty() {
            String::new()
        } else {
            format!(
                "; **never received** for revisions {}",
                x.missing_revisions
                    .iter()
                    .map(|r| format!("`{r}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        x.posts,
        x.distinct,
        types.join(", "),
        if x.not_json > 0 {
            format!(", {} bodies not JSON", x.not_json)
        } else {
            String::new()
        },
        if x.checked {
            format!(
                "`GET /v1/integrations/{{name}}/events`, every page, {} after the load: {} events, {} \
                 `success`, {} `pending`, {} `failed`; {} took more than one attempt; {} never reached \
                 the receiver.",
                ms(x.settle_ms),
                x.listed,
                x.success,
                x.pending,
                x.failed,
                x.retried,
                x.not_received
            )
        } else {
            "The events were not listed.".to_string()
        }
    );
    if !x.trace_sample.is_empty() {
        let _ = writeln!(s, "Trace of the first event not delivered:\n");
        for l in &x.trace_sample {
            let _ = writeln!(s, "- `{}`", l.replace('`', "'"));
        }
        let _ = writeln!(s);
    }
    if let Some(c) = &x.cleanup {
        let _ = writeln!(
            s,
            "Unpublishing the integration failed: `{}`\n",
            c.replace('`', "'")
        );
    }
}

fn scripts(s: &mut String, x: &ScriptsResult) {
    let _ = writeln!(s, "### Integration scripts (`scripts`)\n");
    if x.endpoint_missing {
        let _ = writeln!(
            s,
            "n/a (endpoint missing): the server has no integration or render routes.\n"
        );
        return;
    }
    let mb = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1} MB"));
    let _ = writeln!(
        s,
        "Integration `{name}`, published in organization `{org}` with a script written by hand in \
         `@gitbook/runtime`'s protocol, installed there and enabled on the big space `{space}`; its \
         component `{component}` answers a block with one short markdown element (with a random \
         UUID, so that only a kept answer repeats) and `Cache-Control: max-age={age}` when its props \
         ask to be cached. Rendered with `POST /v1/integrations/{{name}}/render` by {callers}; an \
         answer is {bytes} bytes. The first render (the script read from the object store, the \
         installation token made) took {first}; the cached request's first render (a miss) {miss}, \
         the same request again (a hit) {hit}. Every cached answer must be the kept one's bytes, \
         every uncached one must carry its request's nonce: anything else is an error. The server \
         runs at most {slots} scripts at once (`QUIRE_SCRIPT_CONCURRENCY`); the others wait for a \
         slot. Server peak RSS during the phase: {rss:.1} MB.\n",
        name = x.integration,
        org = x.org,
        space = x.space,
        component = sc::COMPONENT,
        age = sc::MAX_AGE_S,
        callers = if x.callers.is_empty() { "-" } else { &x.callers },
        bytes = x.answer_bytes,
        first = x.first_render_ms.map_or_else(|| "-".into(), ms),
        miss = x.cache_miss_ms.map_or_else(|| "-".into(), ms),
        hit = x.cache_hit_ms.map_or_else(|| "-".into(), ms),
        slots = sc::SCRIPT_SLOTS,
        rss = x.peak_rss_mb
    );
    if let Some(f) = &x.failure {
        let _ = writeln!(s, "**The phase failed:** `{}`\n", f.replace('`', "'"));
    }
    let _ = writeln!(
        s,
        "| renders | conns | renders/s | p50 | p90 | p99 | max | errors | what |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|---|");
    let mut errors = Vec::new();
    for r in [
        &x.cached,
        &x.uncached,
        &x.concurrent,
        &x.cached_single,
        &x.uncached_single,
    ]
    .into_iter()
    .flatten()
    {
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {} | {} | {} | {} | {} | {} |",
            r.family,
            r.connections,
            r.rps,
            ms(r.p50_ms),
            ms(r.p90_ms),
            ms(r.p99_ms),
            ms(r.max_ms),
            r.errors,
            r.detail
        );
        errors.extend(r.error_samples.iter().map(|e| {
            format!(
                "- {} ({} conns): `{}`",
                r.family,
                r.connections,
                e.replace('`', "'")
            )
        }));
    }
    let _ = writeln!(s);
    if !errors.is_empty() {
        let _ = writeln!(s, "Errors:\n\n{}\n", errors.join("\n"));
    }
    let _ = writeln!(
        s,
        "Memory: {} at the phase's start; idle before the {} renders at once {}; their peak {} \
         (read every {} ms, {} times), {} over idle; {} a second after them.\n",
        mb(x.rss_start_mb),
        sc::MEMORY_CONNECTIONS,
        mb(x.rss_idle_mb),
        mb(x.rss_peak_mb),
        sc::RSS_POLL.as_millis(),
        x.rss_samples,
        x.rss_delta_mb()
            .map_or_else(|| "-".into(), |d| format!("{d:+.1} MB")),
        mb(x.rss_after_mb)
    );
    if let Some(c) = &x.cleanup {
        let _ = writeln!(
            s,
            "Unpublishing the integration failed: `{}`\n",
            c.replace('`', "'")
        );
    }
}

fn pdf(s: &mut String, x: &PdfResult) {
    let _ = writeln!(s, "### PDF exports (`pdf`)\n");
    if x.endpoint_missing {
        let _ = writeln!(s, "n/a (endpoint missing): the server has no PDF route.\n");
        return;
    }
    let _ = writeln!(
        s,
        "Space `{space}` of organization `{org}`: {pages} pages ({groups} groups at the root, each \
         with {tops} top pages of {children} children), {kb:.0} KB of markdown (each page: marks, two \
         `##` sections, links to other pages, a list, a fenced code block, a table of 5 to 8 rows), \
         {images} PNG figures ({image_kb:.0} KB) shown on {with_image} pages, a Chinese and Japanese \
         paragraph on {with_cjk}; written through {crs} change requests in {batches} batches, each \
         merged, in {setup:.1} s. Each PDF is timed from just before `GET /v1/spaces/{{id}}/pdf` to \
         the last byte of its link's 200, following the link's 202s (it waits up to `--pdf-wait` \
         itself) no more than {poll} ms apart. Server peak RSS during the phase: {rss:.1} MB.\n",
        space = x.space,
        org = x.org,
        pages = x.pages,
        groups = x.groups,
        tops = pd::TOPS_PER_GROUP,
        children = pd::CHILDREN,
        kb = x.markdown_bytes as f64 / 1e3,
        images = pd::IMAGES,
        image_kb = x.image_bytes as f64 / 1e3,
        with_image = x.pages_with_image,
        with_cjk = x.pages_with_cjk,
        crs = x.change_requests,
        batches = x.batches,
        setup = x.setup_seconds,
        poll = pd::POLL_AT_MOST.as_millis(),
        rss = x.peak_rss_mb
    );
    if let Some(f) = &x.failure {
        let _ = writeln!(s, "**The phase failed:** `{}`\n", f.replace('`', "'"));
    }
    if !x.full.is_empty() {
        let mb = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1} MB"));
        let _ = writeln!(
            s,
            "| whole space | API call | to the whole PDF | link requests | PDF | RSS idle before | RSS peak | over idle | RSS reads |"
        );
        let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|");
        for f in &x.full {
            let _ = writeln!(
                s,
                "| {} | {} | {:.2} s | {} | {:.2} MB | {} | {} | {} | {} |",
                f.label,
                ms(f.url_ms),
                f.seconds,
                f.link_requests,
                f.bytes as f64 / 1e6,
                mb(f.rss_idle_mb),
                mb(f.rss_peak_mb),
                f.rss_delta_mb()
                    .map_or_else(|| "-".into(), |d| format!("{d:+.1} MB")),
                f.rss_samples
            );
        }
        let _ = writeln!(s);
    }
    let mut rows: Vec<&FamilyResult> = x.one_page.iter().collect();
    for p in &x.cached {
        rows.push(&p.pdf);
        rows.push(&p.file);
    }
    if !rows.is_empty() {
        let _ = writeln!(
            s,
            "| requests | conns | req/s | p50 | p90 | p99 | max | errors | what |"
        );
        let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|---|");
        for r in &rows {
            let _ = writeln!(
                s,
                "| {} | {} | {:.0} | {} | {} | {} | {} | {} | {} |",
                r.family,
                r.connections,
                r.rps,
                ms(r.p50_ms),
                ms(r.p90_ms),
                ms(r.p99_ms),
                ms(r.max_ms),
                r.errors,
                r.detail
            );
        }
        let _ = writeln!(s);
        let errors: Vec<String> = rows
            .iter()
            .flat_map(|r| {
                r.error_samples.iter().map(move |e| {
                    format!(
                        "- {} ({} conns): `{}`",
                        r.family,
                        r.connections,
                        e.replace('`', "'")
                    )
                })
            })
            .collect();
        if !errors.is_empty() {
            let _ = writeln!(s, "Errors:\n\n{}\n", errors.join("\n"));
        }
    }
    if !x.cached.is_empty() || !x.cached_skipped.is_empty() {
        let _ = writeln!(
            s,
            "Cached: a ready export's link and a download link of the same bytes, uploaded as a file of \
             the space (both are then one blob), measured in alternating slices ({} of each) at {} \
             connections, no token on either.",
            crate::load::ALTERNATING_ROUNDS,
            pd::CACHED_CONNECTIONS
        );
        for p in &x.cached {
            let _ = writeln!(
                s,
                "- {} ({} bytes): the PDF's p99 is {:.2}× the file's; the file's req/s {:.2}× the PDF's.",
                p.what,
                p.bytes,
                p.p99_ratio(),
                p.rps_ratio()
            );
        }
        for skipped in &x.cached_skipped {
            let _ = writeln!(s, "- not compared: {skipped}.");
        }
        let _ = writeln!(s);
    }
}

fn conversations(s: &mut String, x: &ConversationsResult) {
    let _ = writeln!(s, "### Support conversations (`conversations`)\n");
    if x.endpoint_missing {
        let _ = writeln!(
            s,
            "n/a (endpoint missing): the server has no conversation routes.\n"
        );
        return;
    }
    let _ = writeln!(
        s,
        "Organization `{org}`, made for the phase, with docs space `{space}`: {pages} pages, one per \
         documented topic ({kb:.1} KB of markdown: each topic's four keywords in every part, neutral \
         filler), written through one change request, merged, in {setup:.1} s. The generator (fixed \
         seed) made {n} conversations `bench-1`… ({two} asking two questions of different topics): a \
         user message (a greeting, the question, a sign-off) and an agent's reply, dated over the \
         past {weeks} weeks; {doc}% of the questions are about the {docs} documented topics, the \
         others about {undocs} topics whose keywords are in no page, each topic asked in four \
         phrasings sharing most of its keywords. They were ingested at {conns} connections from \
         T0, just before the first POST; then progress was read every {poll} ms (`count` of \
         `GET …/conversations?processed=false`, and once none is left the issues' `count` and the \
         clusters' `stats.issues`): done is nothing left to analyse and every issue in a cluster. \
         Then one more conversation, `{one}`, asking an undocumented topic's question (\"{q}\", topic \
         \"{topic}\"), timed from just before its POST until it is processed and done again (read \
         every {one_poll} ms). Server peak RSS during the phase: {rss:.1} MB.\n",
        org = x.org,
        space = x.space,
        pages = x.pages,
        kb = x.markdown_bytes as f64 / 1e3,
        setup = x.setup_seconds,
        n = x.conversations,
        two = x.two_questions,
        weeks = cv::WEEKS,
        doc = cv::DOCUMENTED_PERCENT,
        docs = cv::DOCUMENTED.len(),
        undocs = cv::UNDOCUMENTED.len(),
        conns = cv::INGEST_CONNECTIONS,
        poll = cv::POLL.as_millis(),
        one = cv::ONE_ID,
        q = x.one_question,
        topic = x.one_topic,
        one_poll = cv::ONE_POLL.as_millis(),
        rss = x.peak_rss_mb
    );
    if let Some(f) = &x.failure {
        let _ = writeln!(s, "**The phase failed:** `{}`\n", f.replace('`', "'"));
    }
    let seconds = |ms: Option<f64>| ms.map_or_else(|| "-".into(), |v| format!("{:.1} s", v / 1000.0));
    let _ = writeln!(s, "| step | from T0 | what |");
    let _ = writeln!(s, "|---|--:|---|");
    if let Some(i) = &x.ingest {
        let _ = writeln!(
            s,
            "| ingest | {:.1} s | {} of {} conversations at {} connections: {:.0}/s; POST p50 {}, p99 {}, \
             max {}; {} errors |",
            x.ingest_seconds,
            x.ingested,
            x.conversations,
            i.connections,
            x.ingest_rate(),
            ms(i.p50_ms),
            ms(i.p99_ms),
            ms(i.max_ms),
            i.errors
        );
    }
    let _ = writeln!(
        s,
        "| all analysed | {} | no conversation left to analyse |",
        seconds(x.analysed_ms)
    );
    let _ = writeln!(
        s,
        "| **done** (T_all) | {} | every issue clustered; {} progress reads{} |",
        seconds(x.all_ms),
        x.polls,
        if x.timed_out {
            format!(", **not done after {} s**", cv::GIVE_UP.as_secs())
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        s,
        "| one more (T_one) | {} after its POST | {} issue{}{}; {} progress reads |\n",
        x.one_ms.map_or_else(|| "-".into(), ms),
        x.one_issues,
        if x.one_issues == 1 { "" } else { "s" },
        match x.one_joined_topic {
            Some(true) => ", in the cluster holding its topic's issues",
            Some(false) => ", **not** in the cluster holding its topic's issues",
            None => "",
        },
        x.one_polls
    );
    if let Some(p) = &x.last {
        let _ = writeln!(s, "Last read: {}.\n", p.describe());
    }
    if let Some(i) = &x.ingest
        && !i.error_samples.is_empty()
    {
        let errors: Vec<String> = i
            .error_samples
            .iter()
            .map(|e| format!("- `{}`", e.replace('`', "'")))
            .collect();
        let _ = writeln!(s, "Ingest errors:\n\n{}\n", errors.join("\n"));
    }
    let Some(q) = &x.quality else {
        return;
    };
    let pct = |v: Option<f64>| v.map_or_else(|| "-".into(), percent);
    let _ = writeln!(
        s,
        "What the server found, read back with the paged lists after done and judged against the \
         generator's topic of each question (an issue is matched to its question by its title):\n"
    );
    let _ = writeln!(s, "| figure | value |");
    let _ = writeln!(s, "|---|---|");
    let _ = writeln!(
        s,
        "| conversations, issues, clusters | {}, {}, {} |",
        q.conversations, q.issues, q.clusters
    );
    let _ = writeln!(
        s,
        "| answered recall: documented conversations that made no issue | {} ({} of {}; per question {} of {}) |",
        pct(q.answered_recall()),
        q.documented_answered,
        q.documented_conversations,
        q.documented_questions_answered,
        q.documented_questions
    );
    let _ = writeln!(
        s,
        "| precision: issues from undocumented topics | {} ({} of {}; {} from documented topics, {} matching \
         no question asked) |",
        pct(q.precision()),
        q.issues_undocumented,
        q.issues,
        q.issues_documented,
        q.issues_unmatched
    );
    let _ = writeln!(
        s,
        "| undocumented questions that made an issue | {} ({} of {}) |",
        pct(q.detected()),
        q.undocumented_with_issue,
        q.undocumented_questions
    );
    let _ = writeln!(
        s,
        "| clusters per undocumented topic (1 is ideal) | {} |",
        match q.clusters_per_topic_mean {
            Some(mean) => format!(
                "mean {mean:.2}, worst {}{}",
                q.clusters_per_topic_worst,
                if q.worst_topic.is_empty() {
                    String::new()
                } else {
                    format!(" (\"{}\")", q.worst_topic)
                }
            ),
            None => "- (no issue is listed with a cluster)".to_string(),
        }
    );
    let _ = writeln!(
        s,
        "| cluster purity (issue-weighted share of a cluster's issues from its majority topic) | {} |",
        match q.purity {
            Some(p) => format!("{} ({} clusters mix topics)", percent(p), q.mixed_clusters),
            None => "- (no issue is listed with a cluster)".to_string(),
        }
    );
    let _ = writeln!(
        s,
        "| clusters labelled with another topic's question; clusters sharing their label with another | {}; {} |",
        q.mislabelled, q.duplicate_labels
    );
    let _ = writeln!(
        s,
        "| issues without a cluster; clusters whose `stats.issues` differs from their listed issues | {}; {} |\n",
        q.unclustered, q.stats_mismatches
    );
    if !q.topics.is_empty() {
        let _ = writeln!(
            s,
            "| undocumented topic | questions | issues | clusters | share in its main cluster |"
        );
        let _ = writeln!(s, "|---|--:|--:|--:|--:|");
        for t in &q.topics {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                t.topic,
                t.questions,
                t.issues,
                t.clusters,
                if t.clusters == 0 {
                    "-".to_string()
                } else {
                    percent(t.main_share)
                }
            );
        }
        let _ = writeln!(s);
    }
    if !q.largest.is_empty() {
        let _ = writeln!(
            s,
            "| largest clusters: label | the label's topic | issues | conversations | listed | majority topic | its share | topics | weekly pulse (12 weeks) |"
        );
        let _ = writeln!(s, "|---|---|--:|--:|--:|---|--:|--:|--:|");
        for c in &q.largest {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                c.label.replace('|', "/"),
                c.label_topic,
                c.issues,
                c.conversations,
                c.listed,
                c.topic,
                if c.listed == 0 {
                    "-".to_string()
                } else {
                    percent(c.majority_share)
                },
                c.topics,
                c.pulse
            );
        }
        let _ = writeln!(s);
    }
    if !q.examples.is_empty() {
        let _ = writeln!(s, "Surprises (a few of each kind):\n");
        for e in &q.examples {
            let _ = writeln!(s, "- {}", e.replace('|', "/"));
        }
        let _ = writeln!(s);
    }
}

fn pathological(s: &mut String, p: &PathologicalResult) {
    let _ = writeln!(s, "### Pathological input (`pathological`)\n");
    let _ = writeln!(
        s,
        "{}: {:.0} KB of markdown{}. Merged {} times on the fast path (main had not moved since the \
         change request was made) and {} times three-way (another change request edited the paragraph \
         before the table and was merged first, so the merge loads and diffs the three versions), each \
         with fresh change requests. Alongside, without pause: get-space on {} connections and a small \
         write (a short comment on another space) on {}; a request counts in a merge's window when it \
         overlapped it (sent before the merge answered, answered after it was sent). Server peak RSS \
         during the phase: {:.1} MB (not in the memory budget).\n",
        p.document,
        p.markdown_bytes as f64 / 1024.0,
        p.page_json_bytes
            .map(|b| format!(
                ", {:.1} MB of JSON as the page is served with its document",
                b as f64 / 1e6
            ))
            .unwrap_or_default(),
        patho::REPEATS,
        patho::REPEATS,
        patho::READ_CONNECTIONS,
        patho::WRITE_CONNECTIONS,
        p.peak_rss_mb
    );
    if let Some(f) = &p.failure {
        let _ = writeln!(s, "**The phase failed:** `{}`\n", f.replace('`', "'"));
    }
    let _ = writeln!(s, "| merge | content write (not budgeted) | merge | result |");
    let _ = writeln!(s, "|---|--:|--:|---|");
    for m in &p.merges {
        let _ = writeln!(
            s,
            "| {} {} | {} | {} | {} |",
            m.kind,
            m.repeat,
            ms(m.write_ms),
            if m.ok {
                ms(m.merge_ms)
            } else {
                format!("**{}**", ms(m.merge_ms))
            },
            if m.ok {
                m.result.clone()
            } else {
                format!("**{}**", m.result.replace('|', "/").replace('`', "'"))
            }
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "| requests alongside | window | small writes | p50 | p99 | max | get-space | p50 | p99 | max | errors |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for w in &p.windows {
        let (a, b) = (&w.small_write, &w.get_space);
        let _ = writeln!(
            s,
            "| {} | {:.2} s | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            w.name,
            w.seconds,
            a.requests,
            ms(a.p50_ms),
            ms(a.p99_ms),
            ms(a.max_ms),
            b.requests,
            ms(b.p50_ms),
            ms(b.p99_ms),
            ms(b.max_ms),
            a.errors + b.errors
        );
    }
    let _ = writeln!(s);
    let errors: Vec<String> = p
        .windows
        .iter()
        .filter(|w| w.name == patho::DURING_ALL || w.name == patho::QUIET)
        .flat_map(|w| {
            let name = w.name.clone();
            w.small_write
                .error_samples
                .iter()
                .chain(&w.get_space.error_samples)
                .map(move |e| format!("- {name}: `{}`", e.replace('`', "'")))
        })
        .collect();
    if !errors.is_empty() {
        let _ = writeln!(s, "Errors alongside:\n\n{}\n", errors.join("\n"));
    }
}

fn row(s: &mut String, r: &FamilyResult, ref_rps: f64, ref_p50: f64, ref_p99: f64) {
    if r.missing {
        let _ = writeln!(
            s,
            "| {} | {} | n/a (endpoint missing) | | | | | | | | {} |",
            r.family, r.connections, r.detail
        );
        return;
    }
    let _ = writeln!(
        s,
        "| {} | {} | {:.0} | {} | {} | {} | {} | {} | {} | {} | {} |",
        r.family,
        r.connections,
        r.rps,
        if ref_rps > 0.0 {
            percent(r.rps / ref_rps)
        } else {
            "-".into()
        },
        ms(r.p50_ms),
        ms(r.p99_ms),
        ms(r.max_ms),
        times(r.p50_ms, ref_p50),
        times(r.p99_ms, ref_p99),
        r.errors,
        r.detail
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Machine, Settings};

    fn result(family: Family, conns: usize, rps: f64, p50: f64, p99: f64) -> FamilyResult {
        FamilyResult {
            family: family.name().into(),
            connections: conns,
            requests: 100,
            rps,
            p50_ms: p50,
            p99_ms: p99,
            max_ms: p99 * 2.0,
            ..FamilyResult::default()
        }
    }

    #[test]
    fn budgets_pass_fail_missing_and_not_run() {
        let mut e = EngineReport {
            engine: "SQLite".into(),
            reference_before: result(Family::Reference, 64, 100_000.0, 0.5, 1.0),
            reference_after: result(Family::Reference, 64, 100_000.0, 0.5, 1.0),
            ..EngineReport::default()
        };
        e.results = vec![
            result(Family::GetSpace, 64, 30_000.0, 2.0, 8.0),
            result(Family::ListCommentsP1, 64, 3_000.0, 10.0, 20.0),
            result(Family::ListCommentsP50, 64, 2_000.0, 15.0, 30.0),
            FamilyResult {
                missing: true,
                ..result(Family::SearchOneWord, 64, 0.0, 0.0, 0.0)
            },
        ];
        e.memory.peak_under_load_mb = 120.0;
        e.memory.idle_after_start_mb = 15.0;
        let b = budgets(&e);
        let verdict = |name: &str| {
            b.iter()
                .find(|x| x.name.starts_with(name))
                .map(|x| x.verdict.clone())
                .unwrap()
        };
        assert_eq!(verdict("get-space throughput"), Verdict::Pass);
        assert_eq!(verdict("get-space latency"), Verdict::Pass);
        assert_eq!(verdict("10,000-item list"), Verdict::Fail, "+50%");
        assert_eq!(verdict("spaces list"), Verdict::NotRun);
        assert_eq!(verdict("search"), Verdict::Missing);
        assert_eq!(verdict("one-page merge"), Verdict::NotRun);
        assert_eq!(verdict("memory under load"), Verdict::Pass);
        let text = markdown(&RunReport {
            date: "today".into(),
            machine: Machine::default(),
            settings: Settings {
                smoke: true,
                ..Settings::default()
            },
            engines: vec![e],
        });
        assert!(text.contains("Smoke run, not a measurement"));
        assert!(text.contains("| get-space | 64 | 30000 | 30.0% |"), "{text}");
        assert!(text.contains("n/a (endpoint missing)"));
        assert!(
            text.contains("bench/ANALYSIS.md"),
            "a failing budget points to the analysis"
        );
    }

    #[test]
    fn pathological_budgets_pass_fail_and_not_run() {
        use crate::pathological::{MergeRun, Window};
        let mut e = EngineReport {
            engine: "SQLite".into(),
            ..EngineReport::default()
        };
        let verdicts = |e: &EngineReport| {
            let b = budgets(e);
            let v = |name: &str| {
                b.iter()
                    .find(|x| x.name == name)
                    .map(|x| x.verdict.clone())
                    .unwrap()
            };
            (
                v("merge of a page at the limits"),
                v("small write during that merge"),
            )
        };
        assert_eq!(verdicts(&e), (Verdict::NotRun, Verdict::NotRun));
        let run = |kind: &str, repeat: usize, ms: f64| MergeRun {
            kind: kind.into(),
            repeat,
            write_ms: 2000.0,
            merge_ms: ms,
            result: "merge".into(),
            ok: true,
        };
        let window = |name: &str, merges: usize, p99: f64| Window {
            name: name.into(),
            merges,
            seconds: 1.0,
            small_write: result(Family::CreateComment, 1, 100.0, p99 / 2.0, p99),
            get_space: result(Family::GetSpace, 2, 1000.0, 1.0, 2.0),
        };
        let mut p = PathologicalResult {
            merges: (1..=patho::REPEATS)
                .map(|i| run(patho::FAST_PATH, i, 200.0))
                .chain((1..=patho::REPEATS).map(|i| run(patho::THREE_WAY, i, 900.0)))
                .collect(),
            windows: vec![window(patho::QUIET, 0, 5.0), window(patho::DURING_ALL, 6, 60.0)],
            ..PathologicalResult::default()
        };
        e.pathological = Some(p.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Pass));
        p.windows[1] = window(patho::DURING_ALL, 6, 150.0);
        p.merges[4].merge_ms = 1500.0;
        e.pathological = Some(p.clone());
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Fail));
        // A merge that answered conflicts fails both, even when fast.
        p.windows[1] = window(patho::DURING_ALL, 5, 10.0);
        p.merges.truncate(5);
        p.merges[4] = MergeRun {
            result: "conflicts".into(),
            ok: false,
            ..run(patho::THREE_WAY, 2, 300.0)
        };
        p.failure = Some("three-way merge 2 answered: conflicts".into());
        e.pathological = Some(p);
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Fail));
        let text = markdown(&RunReport {
            engines: vec![e],
            ..RunReport::default()
        });
        assert!(text.contains("**The phase failed:**"), "{text}");
        assert!(
            text.contains("| three-way 2 | 2000 ms | **300 ms** | **conflicts** |"),
            "{text}"
        );
    }

    #[test]
    fn openapi_budgets_pass_fail_missing_and_not_run() {
        use crate::openapi::{PageRead, SpecRun};
        let mut e = EngineReport {
            engine: "SQLite".into(),
            ..EngineReport::default()
        };
        let verdicts = |e: &EngineReport| {
            let [a, b] = openapi_budgets(e);
            (a.verdict, b.verdict)
        };
        assert_eq!(verdicts(&e), (Verdict::NotRun, Verdict::NotRun));
        let spec = |n: usize, ms: f64| SpecRun {
            slug: format!("gitbook-api-{n}"),
            create_ms: 5.0,
            complete_ms: ms,
            polls: 10,
            version: Some(format!("v{n}")),
            ok: true,
            ..SpecRun::default()
        };
        let page = |title: &str, cold: f64| PageRead {
            id: title.to_lowercase(),
            title: title.into(),
            path: title.to_lowercase(),
            markdown_bytes: 20_480,
            answer_bytes: 4_000,
            gzipped: true,
            cold_ms: cold,
            warm_ms: Some(cold / 10.0),
            ..PageRead::default()
        };
        let mut o = OpenApiResult {
            description: oa::DEFAULT_DESCRIPTION.into(),
            specs: vec![spec(1, 1200.0), spec(2, 900.0), spec(3, 1000.0)],
            space: Some("sp".into()),
            merge_ms: Some(40.0),
            pages_visible_ms: Some(700.0),
            pages: vec![
                page("Organizations", 12.0),
                page("Spaces", 30.0),
                page("Users", 8.0),
            ],
            ..OpenApiResult::default()
        };
        e.openapi = Some(o.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Pass));
        let [a, b] = openapi_budgets(&e);
        assert!(
            a.measured.starts_with("1200 ms (gitbook-api-1; 3 of 3 processed"),
            "{}",
            a.measured
        );
        assert!(
            b.measured.starts_with(
                "30.0 ms (`Spaces`, 20.0 KB of markdown); median 12.0 ms; 3 pages; warm worst 3.00 ms"
            ),
            "{}",
            b.measured
        );
        // Too slow: each budget on its own.
        o.specs[1].complete_ms = 5_500.0;
        o.pages[2].cold_ms = 80.0;
        e.openapi = Some(o.clone());
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Fail));
        o.specs[1].complete_ms = 900.0;
        e.openapi = Some(o.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Fail));
        o.pages[2].cold_ms = 8.0;
        // A page that did not read fails the page budget.
        o.pages[0].error = Some("GET ...: 500".into());
        e.openapi = Some(o.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Fail));
        o.pages[0].error = None;
        // A specification that failed to process fails both: no page came from it.
        o.specs.truncate(1);
        o.specs[0] = SpecRun {
            error_code: Some("PARSE_ERROR".into()),
            errors: vec!["INVALID_SPEC bad at /paths".into()],
            ok: false,
            version: None,
            ..spec(1, 800.0)
        };
        o.pages.clear();
        o.failure = Some("gitbook-api-1: PARSE_ERROR: INVALID_SPEC bad at /paths".into());
        e.openapi = Some(o.clone());
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Fail));
        let text = markdown(&RunReport {
            engines: vec![e.clone()],
            ..RunReport::default()
        });
        assert!(text.contains("### OpenAPI reference (`openapi`)"), "{text}");
        assert!(text.contains("**The phase failed:**"), "{text}");
        assert!(
            text.contains("**PARSE_ERROR** INVALID_SPEC bad at /paths"),
            "{text}"
        );
        // The description was not there, or the server has no such routes.
        e.openapi = Some(OpenApiResult {
            description_missing: true,
            ..OpenApiResult::default()
        });
        assert_eq!(verdicts(&e), (Verdict::InputMissing, Verdict::InputMissing));
        e.openapi = Some(OpenApiResult {
            endpoint_missing: true,
            ..OpenApiResult::default()
        });
        assert_eq!(verdicts(&e), (Verdict::Missing, Verdict::Missing));
        assert_eq!(
            budgets(&e)
                .iter()
                .filter(|b| b.name.starts_with("OpenAPI"))
                .count(),
            2
        );
    }

    #[test]
    fn events_budgets_pass_fail_missing_and_not_run() {
        let mut e = EngineReport {
            engine: "SQLite".into(),
            ..EngineReport::default()
        };
        let verdicts = |e: &EngineReport| {
            let [a, b, c] = events_budgets(e);
            (a.verdict, b.verdict, c.verdict)
        };
        assert_eq!(verdicts(&e), (Verdict::NotRun, Verdict::NotRun, Verdict::NotRun));
        let latency = |p50: f64, p99: f64| Latency {
            count: 200,
            p50_ms: p50,
            p90_ms: p99 * 0.8,
            p99_ms: p99,
            max_ms: p99 * 1.5,
            mean_ms: p50,
        };
        let mut x = EventsResult {
            org: "org".into(),
            integration: "quire-bench-events-1".into(),
            receiver_url: "http://127.0.0.1:1/hook".into(),
            baseline: Some(result(Family::Merge, 4, 50.0, 40.0, 90.0)),
            with_integration: Some(result(Family::Merge, 4, 48.0, 44.0, 95.0)),
            delivery: Some(latency(15.0, 120.0)),
            delivery_from_sent: Some(latency(60.0, 200.0)),
            expected: 250,
            received: 250,
            all_received_ms: Some(80.0),
            settle_ms: 400.0,
            posts: 760,
            distinct: 760,
            checked: true,
            listed: 760,
            success: 760,
            ..EventsResult::default()
        };
        e.events = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Pass, Verdict::Pass));
        let [a, b, c] = events_budgets(&e);
        assert!(
            a.measured
                .starts_with("250 of 250 received (the last 80.0 ms after the load)"),
            "{}",
            a.measured
        );
        assert!(
            b.measured.starts_with(
                "p99 120 ms (p50 15.0 ms, max 180 ms, 200 merges); from the request sent: p99 200 ms"
            ),
            "{}",
            b.measured
        );
        assert!(
            c.measured.starts_with("44.0 ms with, 40.0 ms without (110.0%"),
            "{}",
            c.measured
        );
        // Slower merges, slow delivery: each budget on its own.
        x.with_integration = Some(result(Family::Merge, 4, 40.0, 49.0, 120.0));
        e.events = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Pass, Verdict::Fail));
        x.with_integration = Some(result(Family::Merge, 4, 48.0, 30.0, 95.0));
        x.delivery = Some(latency(15.0, 650.0));
        e.events = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Fail, Verdict::Pass));
        x.delivery = Some(latency(15.0, 120.0));
        // An event that never arrived fails both the delivery and its latency; a failed or
        // pending one the delivery.
        x.received = 249;
        x.missing_revisions = vec!["rev".into()];
        e.events = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Fail, Verdict::Pass));
        x.received = 250;
        x.missing_revisions.clear();
        x.failed = 1;
        x.success = 759;
        x.trace_sample = vec!["space_content_updated failed (attempts 8)".into()];
        e.events = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Pass, Verdict::Pass));
        x.failed = 0;
        x.pending = 1;
        e.events = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Pass, Verdict::Pass));
        let text = markdown(&RunReport {
            engines: vec![e.clone()],
            ..RunReport::default()
        });
        assert!(text.contains("### Integration events (`events`)"), "{text}");
        assert!(
            text.contains("| no integration | 4 | 50.0 | 40.0 ms | 90.0 ms |"),
            "{text}"
        );
        assert!(
            text.contains("| merge answered → received | 200 | 15.0 ms |"),
            "{text}"
        );
        assert!(text.contains("Trace of the first event not delivered"), "{text}");
        // The listing was not read: not delivered, whatever arrived.
        x.pending = 0;
        x.checked = false;
        x.failure = Some("GET /v1/integrations/x/events: 500".into());
        e.events = Some(x);
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Pass, Verdict::Pass));
        e.events = Some(EventsResult {
            endpoint_missing: true,
            ..EventsResult::default()
        });
        assert_eq!(
            verdicts(&e),
            (Verdict::Missing, Verdict::Missing, Verdict::Missing)
        );
        assert_eq!(
            budgets(&e)
                .iter()
                .filter(|b| b.name.contains("integration"))
                .count(),
            3
        );
    }

    #[test]
    fn scripts_budgets_pass_fail_missing_and_not_run() {
        let mut e = EngineReport {
            engine: "SQLite".into(),
            ..EngineReport::default()
        };
        let verdicts = |e: &EngineReport| {
            let [a, b, c] = scripts_budgets(e);
            (a.verdict, b.verdict, c.verdict)
        };
        assert_eq!(verdicts(&e), (Verdict::NotRun, Verdict::NotRun, Verdict::NotRun));
        let render = |family: &str, conns: usize, p50: f64, p99: f64| FamilyResult {
            family: family.into(),
            connections: conns,
            requests: 300,
            rps: 1000.0,
            p50_ms: p50,
            p99_ms: p99,
            max_ms: p99 * 2.0,
            ..FamilyResult::default()
        };
        let mut x = ScriptsResult {
            org: "org".into(),
            space: "space".into(),
            integration: "quire-bench-scripts-1".into(),
            callers: "members".into(),
            first_render_ms: Some(30.0),
            cached: Some(render(sc::CACHED, 64, 2.0, 8.0)),
            cached_single: Some(render(sc::CACHED, 1, 0.3, 0.6)),
            uncached: Some(render(sc::UNCACHED, 4, 12.0, 30.0)),
            concurrent: Some(render(sc::CONCURRENT, 100, 200.0, 400.0)),
            rss_idle_mb: Some(150.0),
            rss_peak_mb: Some(190.0),
            rss_samples: 120,
            ..ScriptsResult::default()
        };
        e.scripts = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Pass, Verdict::Pass));
        let [a, b, c] = scripts_budgets(&e);
        assert!(
            a.measured.starts_with("p99 8.00 ms at 64 conns (p50 2.00 ms"),
            "{}",
            a.measured
        );
        assert_eq!(a.unloaded, "0.60 ms at 1 conn");
        assert!(
            b.measured.ends_with("; the first render 30.0 ms"),
            "{}",
            b.measured
        );
        assert!(
            c.measured.starts_with(
                "+40.0 MB (idle 150.0 MB, peak 190.0 MB, read 120 times); 300 renders, 100 at once"
            ),
            "{}",
            c.measured
        );
        // Each budget on its own.
        x.cached = Some(render(sc::CACHED, 64, 2.0, 25.0));
        e.scripts = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Pass, Verdict::Pass));
        x.cached = Some(FamilyResult {
            errors: 3,
            ..render(sc::CACHED, 64, 2.0, 8.0)
        });
        e.scripts = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Pass, Verdict::Pass));
        x.cached = Some(render(sc::CACHED, 64, 2.0, 8.0));
        x.uncached = Some(render(sc::UNCACHED, 4, 12.0, 55.0));
        e.scripts = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Fail, Verdict::Pass));
        x.uncached = Some(render(sc::UNCACHED, 4, 12.0, 30.0));
        x.rss_peak_mb = Some(251.0);
        e.scripts = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Pass, Verdict::Fail));
        // Renders that failed, or a resident set not read, fail the memory budget.
        x.rss_peak_mb = Some(190.0);
        x.concurrent = Some(FamilyResult {
            errors: 1,
            ..render(sc::CONCURRENT, 100, 200.0, 400.0)
        });
        e.scripts = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Pass, Verdict::Fail));
        x.concurrent = Some(render(sc::CONCURRENT, 100, 200.0, 400.0));
        x.rss_idle_mb = None;
        e.scripts = Some(x.clone());
        assert_eq!(verdicts(&e), (Verdict::Pass, Verdict::Pass, Verdict::Fail));
        x.rss_idle_mb = Some(150.0);
        e.scripts = Some(x.clone());
        let text = markdown(&RunReport {
            engines: vec![e.clone()],
            ..RunReport::default()
        });
        assert!(text.contains("### Integration scripts (`scripts`)"), "{text}");
        assert!(text.contains("| render-cached | 64 | 1000 | 2.00 ms |"), "{text}");
        assert!(text.contains("+40.0 MB over idle"), "{text}");
        // Stopped before anything was measured.
        e.scripts = Some(ScriptsResult {
            failure: Some("POST /v1/integrations/x/render: 502".into()),
            ..ScriptsResult::default()
        });
        assert_eq!(verdicts(&e), (Verdict::Fail, Verdict::Fail, Verdict::Fail));
        e.scripts = Some(ScriptsResult {
            endpoint_missing: true,
            ..ScriptsResult::default()
        });
        assert_eq!(
            verdicts(&e),
            (Verdict::Missing, Verdict::Missing, Verdict::Missing)
        );
        assert_eq!(
            budgets(&e).iter().filter(|b| b.name.contains("render")).count(),
            3
        );
    }

    #[test]
    fn pdf_budgets_pass_fail_missing_and_not_run() {
        use crate::pdf::{CachedPair, FullRender};
        let mut e = EngineReport {
            engine: "SQLite".into(),
            ..EngineReport::default()
        };
        let verdicts = |e: &EngineReport| pdf_budgets(e).map(|b| b.verdict);
        assert_eq!(
            verdicts(&e),
            [Verdict::NotRun, Verdict::NotRun, Verdict::NotRun, Verdict::NotRun]
        );
        let full = |seconds: f64, peak: f64| FullRender {
            label: "main".into(),
            url_ms: 5.0,
            seconds,
            link_requests: 2,
            bytes: 3_000_000,
            rss_idle_mb: Some(60.0),
            rss_peak_mb: Some(peak),
            rss_samples: 300,
        };
        let side = |family: &str, rps: f64, p99: f64| FamilyResult {
            family: family.into(),
            connections: 16,
            requests: 1000,
            rps,
            p50_ms: p99 / 2.0,
            p99_ms: p99,
            ..FamilyResult::default()
        };
        let mut x = PdfResult {
            space: "space".into(),
            pages: 500,
            full: vec![full(6.0, 250.0), full(7.5, 240.0)],
            one_page: Some(FamilyResult {
                requests: 20,
                ..side(pd::ONE_PAGE, 5.0, 180.0)
            }),
            cached: vec![CachedPair {
                what: "one-page PDF".into(),
                bytes: 40_000,
                pdf: side(pd::CACHED_PDF, 4000.0, 9.0),
                file: side(pd::FILE_DOWNLOAD, 4500.0, 8.0),
            }],
            ..PdfResult::default()
        };
        e.pdf = Some(x.clone());
        assert_eq!(verdicts(&e), [const { Verdict::Pass }; 4]);
        let [a, b, _, d] = pdf_budgets(&e);
        assert!(
            a.measured.starts_with("7.50 s (6.00 s, 7.50 s;"),
            "{}",
            a.measured
        );
        assert!(
            b.measured
                .starts_with("250.0 MB (idle 60.0 MB before it, +190.0 MB over"),
            "{}",
            b.measured
        );
        assert!(d.measured.contains("(1.12×)"), "{}", d.measured);
        // Each budget on its own.
        x.full[1].seconds = 12.0;
        e.pdf = Some(x.clone());
        assert_eq!(
            verdicts(&e),
            [Verdict::Fail, Verdict::Pass, Verdict::Pass, Verdict::Pass]
        );
        x.full[1].seconds = 7.5;
        x.full[0].rss_peak_mb = Some(420.0);
        e.pdf = Some(x.clone());
        assert_eq!(
            verdicts(&e),
            [Verdict::Pass, Verdict::Fail, Verdict::Pass, Verdict::Pass]
        );
        x.full[0].rss_peak_mb = Some(250.0);
        x.one_page = Some(FamilyResult {
            requests: 20,
            ..side(pd::ONE_PAGE, 5.0, 320.0)
        });
        e.pdf = Some(x.clone());
        assert_eq!(
            verdicts(&e),
            [Verdict::Pass, Verdict::Pass, Verdict::Fail, Verdict::Pass]
        );
        x.one_page = Some(FamilyResult {
            requests: 20,
            ..side(pd::ONE_PAGE, 5.0, 180.0)
        });
        x.cached[0].pdf = side(pd::CACHED_PDF, 2000.0, 9.0);
        e.pdf = Some(x.clone());
        assert_eq!(
            verdicts(&e),
            [Verdict::Pass, Verdict::Pass, Verdict::Pass, Verdict::Fail]
        );
        x.cached[0].pdf = side(pd::CACHED_PDF, 4000.0, 9.0);
        // The second export failed: the worst is unknown.
        x.full.pop();
        x.failure = Some("GET /pdfs/x: 422".into());
        e.pdf = Some(x.clone());
        assert_eq!(
            verdicts(&e),
            [Verdict::Fail, Verdict::Fail, Verdict::Pass, Verdict::Pass]
        );
        e.pdf = Some(x);
        let text = markdown(&RunReport {
            engines: vec![e.clone()],
            ..RunReport::default()
        });
        assert!(text.contains("### PDF exports (`pdf`)"), "{text}");
        assert!(
            text.contains("| main | 5.00 ms | 6.00 s | 2 | 3.00 MB | 60.0 MB | 250.0 MB | +190.0 MB | 300 |"),
            "{text}"
        );
        assert!(text.contains("| pdf-cached | 16 | 4000 |"), "{text}");
        e.pdf = Some(PdfResult {
            endpoint_missing: true,
            ..PdfResult::default()
        });
        assert_eq!(verdicts(&e), [const { Verdict::Missing }; 4]);
        assert_eq!(budgets(&e).iter().filter(|b| b.name.contains("PDF")).count(), 4);
    }

    #[test]
    fn conversations_budgets_pass_fail_missing_and_not_run() {
        use crate::conversations::{ClusterSummary, Progress, Quality, TopicSpread};
        let mut e = EngineReport {
            engine: "SQLite".into(),
            ..EngineReport::default()
        };
        let verdicts = |e: &EngineReport| conversations_budgets(e).map(|b| b.verdict);
        assert_eq!(verdicts(&e), [Verdict::NotRun, Verdict::NotRun]);
        let quality = Quality {
            conversations: 10_000,
            documented_conversations: 6_000,
            documented_answered: 5_940,
            documented_questions: 6_500,
            documented_questions_answered: 6_430,
            undocumented_questions: 4_400,
            undocumented_with_issue: 4_400,
            issues: 4_470,
            issues_undocumented: 4_400,
            issues_documented: 70,
            clusters: 21,
            topics: vec![TopicSpread {
                topic: "Jira migration".into(),
                questions: 220,
                issues: 220,
                clusters: 1,
                main_cluster: Some("c1".into()),
                main_share: 1.0,
            }],
            clusters_per_topic_mean: Some(1.05),
            clusters_per_topic_worst: 2,
            worst_topic: "Refunds".into(),
            purity: Some(0.985),
            mixed_clusters: 1,
            largest: vec![ClusterSummary {
                label: "How do I migrate jira?".into(),
                issues: 220,
                conversations: 218,
                listed: 220,
                topic: "Jira migration".into(),
                label_topic: "Jira migration".into(),
                majority_share: 1.0,
                topics: 1,
                pulse: 160,
            }],
            examples: vec![
                "topic \"Refunds\" split into 2 clusters: 200 in its main one, 20 in \"x\"".into(),
            ],
            ..Quality::default()
        };
        let mut x = ConversationsResult {
            org: "org".into(),
            space: "space".into(),
            pages: 20,
            markdown_bytes: 20_000,
            conversations: 10_000,
            two_questions: 1_000,
            ingested: 10_000,
            ingest: Some(FamilyResult {
                family: cv::INGEST.into(),
                connections: 16,
                requests: 10_000,
                rps: 800.0,
                p50_ms: 15.0,
                p99_ms: 60.0,
                max_ms: 90.0,
                ..FamilyResult::default()
            }),
            ingest_seconds: 12.5,
            analysed_ms: Some(30_000.0),
            all_ms: Some(42_000.0),
            polls: 170,
            last: Some(Progress {
                unprocessed: 0,
                issues: Some(4_471),
                clustered: Some(4_471),
                clusters: Some(21),
            }),
            quality: Some(quality),
            one_topic: "Jira migration".into(),
            one_question: "How do I migrate jira?".into(),
            one_ms: Some(350.0),
            one_polls: 12,
            one_issues: 1,
            one_cluster: Some("c1".into()),
            one_joined_topic: Some(true),
            ..ConversationsResult::default()
        };
        e.conversations = Some(x.clone());
        assert_eq!(verdicts(&e), [Verdict::Pass, Verdict::Pass]);
        let [a, b] = conversations_budgets(&e);
        assert_eq!(
            a.measured,
            "42.0 s for 10000 conversations (ingest 12.5 s, 800/s; all analysed after 30.0 s)"
        );
        assert_eq!(b.measured, "350 ms (1 issue, in its topic's cluster)");
        // Each budget on its own.
        x.all_ms = Some(75_000.0);
        e.conversations = Some(x.clone());
        assert_eq!(verdicts(&e), [Verdict::Fail, Verdict::Pass]);
        x.all_ms = Some(42_000.0);
        x.one_ms = Some(1_500.0);
        e.conversations = Some(x.clone());
        assert_eq!(verdicts(&e), [Verdict::Pass, Verdict::Fail]);
        x.one_ms = Some(350.0);
        // A conversation not ingested: not the data set's time.
        x.ingested = 9_999;
        e.conversations = Some(x.clone());
        assert_eq!(verdicts(&e), [Verdict::Fail, Verdict::Pass]);
        assert!(
            conversations_budgets(&e)[0]
                .measured
                .contains("only 9999 ingested"),
            "{}",
            conversations_budgets(&e)[0].measured
        );
        x.ingested = 10_000;
        e.conversations = Some(x.clone());
        let text = markdown(&RunReport {
            engines: vec![e.clone()],
            ..RunReport::default()
        });
        assert!(
            text.contains("### Support conversations (`conversations`)"),
            "{text}"
        );
        assert!(
            text.contains("| ingest | 12.5 s | 10000 of 10000 conversations at 16 connections: 800/s;"),
            "{text}"
        );
        assert!(text.contains("| **done** (T_all) | 42.0 s |"), "{text}");
        assert!(
            text.contains(
                "| answered recall: documented conversations that made no issue | 99.0% (5940 of 6000;"
            ),
            "{text}"
        );
        assert!(
            text.contains("| precision: issues from undocumented topics | 98.4% (4400 of 4470;"),
            "{text}"
        );
        assert!(text.contains("| mean 1.05, worst 2 (\"Refunds\") |"), "{text}");
        assert!(
            text.contains("| Jira migration | 220 | 220 | 1 | 100.0% |"),
            "{text}"
        );
        assert!(text.contains("| 98.5% (1 clusters mix topics) |"), "{text}");
        assert!(
            text.contains("| How do I migrate jira? | Jira migration | 220 | 218 | 220 |"),
            "{text}"
        );
        assert!(text.contains("Surprises (a few of each kind)"), "{text}");
        // Not done in time: both fail, with how far it got.
        x.all_ms = None;
        x.timed_out = true;
        x.one_ms = None;
        x.last = Some(Progress {
            unprocessed: 120,
            ..Progress::default()
        });
        x.failure = Some("not done 600 s after the first POST".into());
        e.conversations = Some(x);
        assert_eq!(verdicts(&e), [Verdict::Fail, Verdict::Fail]);
        let [a, b] = conversations_budgets(&e);
        assert!(
            a.measured
                .starts_with("not done after 600 s; 120 conversations left to analyse"),
            "{}",
            a.measured
        );
        assert!(b.measured.starts_with("not measured; failed:"), "{}", b.measured);
        e.conversations = Some(ConversationsResult {
            endpoint_missing: true,
            ..ConversationsResult::default()
        });
        assert_eq!(verdicts(&e), [Verdict::Missing, Verdict::Missing]);
        assert_eq!(
            budgets(&e)
                .iter()
                .filter(|b| b.name.starts_with("conversations"))
                .count(),
            2
        );
    }

    #[test]
    fn writers_budgets_pass_fail_and_not_run() {
        use crate::writers::SpaceCount;
        let mut e = EngineReport {
            engine: "SQLite".into(),
            ..EngineReport::default()
        };
        let verdict = |e: &EngineReport, name: &str| {
            budgets(e)
                .into_iter()
                .find(|x| x.name.starts_with(name))
                .map(|x| x.verdict)
        };
        assert_eq!(verdict(&e, "comments: one space"), Some(Verdict::NotRun));
        assert_eq!(verdict(&e, "comment counts"), Some(Verdict::NotRun));
        assert_eq!(
            verdict(&e, "`GET /v1/spaces/{spaceId}/comments`"),
            Some(Verdict::NotRun)
        );
        assert_eq!(verdict(&e, "comments on one space (PostgreSQL)"), None, "SQLite");
        let count = SpaceCount {
            space: "s1".into(),
            open_before: 10,
            listed_before: 10,
            made: 5,
            open_after: 15,
            listed_after: 15,
            open_after_writer: 15,
            listed_after_writer: 15,
            ..SpaceCount::default()
        };
        let mut w = WritersResult {
            spaces: vec!["s1".into()],
            search_before: vec![
                result(Family::SearchOneWord, 16, 1000.0, 5.0, 10.0),
                result(Family::SearchOneWord, 64, 1000.0, 20.0, 40.0),
            ],
            same_space: Some(result(Family::CreateComment, 16, 2500.0, 5.0, 20.0)),
            own_spaces: Some(result(Family::CreateComment, 16, 3000.0, 5.0, 20.0)),
            search_after: vec![
                result(Family::SearchOneWord, 16, 950.0, 5.0, 10.0),
                result(Family::SearchOneWord, 64, 800.0, 20.0, 40.0),
            ],
            list_comments: Some(result(Family::ListCommentsP1, 64, 1000.0, 5.0, 15.0)),
            counts: vec![count.clone()],
            counts_exact: Some(true),
            ..WritersResult::default()
        };
        e.writers = Some(w.clone());
        assert_eq!(verdict(&e, "comments: one space"), Some(Verdict::Pass), "83%");
        assert_eq!(verdict(&e, "comment creation latency"), Some(Verdict::Pass));
        assert_eq!(
            verdict(&e, "search after the comment bursts (16"),
            Some(Verdict::Pass)
        );
        assert_eq!(
            verdict(&e, "search after the comment bursts (64"),
            Some(Verdict::Fail),
            "80%"
        );
        assert_eq!(verdict(&e, "comment counts"), Some(Verdict::Pass));
        assert_eq!(
            verdict(&e, "`GET /v1/spaces/{spaceId}/comments`"),
            Some(Verdict::Pass)
        );
        e.engine = "PostgreSQL".into();
        assert_eq!(
            verdict(&e, "comments on one space (PostgreSQL)"),
            Some(Verdict::Pass)
        );
        w.same_space = Some(result(Family::CreateComment, 16, 1500.0, 5.0, 40.0));
        w.counts = vec![SpaceCount {
            listed_after_writer: 14,
            ..count
        }];
        w.counts_exact = Some(false);
        w.list_comments = None;
        e.writers = Some(w.clone());
        assert_eq!(verdict(&e, "comments: one space"), Some(Verdict::Fail), "50%");
        assert_eq!(
            verdict(&e, "comments on one space (PostgreSQL)"),
            Some(Verdict::Fail)
        );
        assert_eq!(verdict(&e, "comment creation latency"), Some(Verdict::Fail));
        assert_eq!(verdict(&e, "comment counts"), Some(Verdict::Fail));
        // Without its own measurement, the list budget takes the list phase's at 64 connections.
        assert_eq!(
            verdict(&e, "`GET /v1/spaces/{spaceId}/comments`"),
            Some(Verdict::NotRun)
        );
        e.results = vec![result(Family::ListCommentsP1, 64, 1000.0, 10.0, 25.0)];
        assert_eq!(
            verdict(&e, "`GET /v1/spaces/{spaceId}/comments`"),
            Some(Verdict::Fail)
        );
        let text = markdown(&RunReport {
            engines: vec![e.clone()],
            ..RunReport::default()
        });
        assert!(text.contains("### Writers (`writers`)"), "{text}");
        assert!(text.contains("Counts exact: **no**"), "{text}");
        assert!(
            text.contains("| `s1` | 5 | 0 | 10 | 15 / 15 | 10 | 15 / 14 | **no** |"),
            "{text}"
        );
        // A phase that failed before the bursts fails its budgets.
        e.writers = Some(WritersResult {
            failure: Some("create a space: 403".into()),
            ..WritersResult::default()
        });
        assert_eq!(verdict(&e, "comments: one space"), Some(Verdict::Fail));
        assert_eq!(verdict(&e, "comment counts"), Some(Verdict::Fail));
        e.writers = Some(WritersResult {
            comments_missing: true,
            ..WritersResult::default()
        });
        assert_eq!(verdict(&e, "comment counts"), Some(Verdict::Missing));
    }

    #[test]
    fn get_space_ratio_uses_the_reference_measured_alongside() {
        let mut e = EngineReport {
            engine: "SQLite".into(),
            reference_before: result(Family::Reference, 64, 100_000.0, 0.5, 1.0),
            reference_after: result(Family::Reference, 64, 100_000.0, 0.5, 1.0),
            ..EngineReport::default()
        };
        e.results = vec![result(Family::GetSpace, 64, 20_000.0, 2.0, 8.0)];
        let verdict = |e: &EngineReport| {
            budgets(e)
                .into_iter()
                .find(|x| x.name == "get-space throughput")
                .map(|x| (x.verdict, x.measured))
                .unwrap()
        };
        assert_eq!(verdict(&e).0, Verdict::Fail, "20% of the mean");
        e.reference_beside_get_space = Some(result(Family::Reference, 64, 60_000.0, 0.5, 1.0));
        let (v, measured) = verdict(&e);
        assert_eq!(v, Verdict::Pass, "{measured}");
        assert!(
            measured.starts_with("33.3% (20000 of 60000 rps measured alongside)"),
            "{measured}"
        );
    }

    #[test]
    fn sites_budget_pass_fail_missing_and_not_run() {
        let mut e = EngineReport {
            engine: "SQLite".into(),
            ..EngineReport::default()
        };
        assert_eq!(sites_budget(&e).verdict, Verdict::NotRun);
        e.sites = Some(SitesResult {
            failure: Some("POST /v1/orgs/o/sites: 500".into()),
            ..SitesResult::default()
        });
        let b = sites_budget(&e);
        assert_eq!(b.verdict, Verdict::Fail);
        assert!(b.measured.contains("the phase failed"), "{}", b.measured);
        e.sites = Some(SitesResult::default());
        e.results = vec![
            result(Family::SitePublished, 64, 9_000.0, 2.0, 6.0),
            result(Family::SitePublishedPlain, 64, 10_000.0, 1.5, 4.0),
        ];
        let b = sites_budget(&e);
        assert_eq!(b.verdict, Verdict::Pass, "{}", b.measured);
        assert!(
            b.measured
                .starts_with("6.00 ms at 64 conns; plain site 4.00 ms (1.5× the plain p99"),
            "{}",
            b.measured
        );
        e.results[1].errors = 3;
        assert_eq!(
            sites_budget(&e).verdict,
            Verdict::Fail,
            "errors on the plain site"
        );
        e.results[1].errors = 0;
        e.results[0].p99_ms = 12.0;
        assert_eq!(sites_budget(&e).verdict, Verdict::Fail);
        e.sites = Some(SitesResult {
            sites_missing: true,
            ..SitesResult::default()
        });
        e.results.clear();
        assert_eq!(sites_budget(&e).verdict, Verdict::Missing);
        assert!(budgets(&e).iter().any(|b| b.name == sites_budget(&e).name));
    }

    #[test]
    fn reader_budgets_pass_fail_and_not_run() {
        let verdicts =
            |e: &EngineReport| -> Vec<Verdict> { reader_budgets(e).into_iter().map(|b| b.verdict).collect() };
        let mut e = EngineReport {
            engine: "SQLite".into(),
            ..EngineReport::default()
        };
        assert_eq!(verdicts(&e), [Verdict::NotRun, Verdict::NotRun, Verdict::NotRun]);
        e.sites = Some(SitesResult {
            failure: Some("POST /v1/orgs/o/sites: 500".into()),
            ..SitesResult::default()
        });
        assert_eq!(verdicts(&e), [Verdict::Fail, Verdict::Fail, Verdict::Fail]);
        let weight = si::PageWeight {
            html_bytes: 30_000,
            html_gzip_bytes: 6_000,
            css_bytes: 20_000,
            css_gzip_bytes: 5_000,
            js_bytes: 10_000,
            js_gzip_bytes: 3_000,
            sidebar_entries: 64,
            ..si::PageWeight::default()
        };
        e.sites = Some(SitesResult {
            reader: Some(ReaderResult {
                weight: Some(weight),
                reference: Some(result(Family::Reference, 64, 20_000.0, 1.0, 3.0)),
                ..ReaderResult::default()
            }),
            ..SitesResult::default()
        });
        e.results = vec![result(Family::ReaderPage, 64, 9_000.0, 4.0, 15.0)];
        let b = reader_budgets(&e);
        assert_eq!(verdicts(&e), [Verdict::Pass, Verdict::Pass, Verdict::Pass]);
        assert!(
            b[1].measured
                .starts_with("45.0% (9000 of 20000 rps measured alongside)"),
            "{}",
            b[1].measured
        );
        assert!(b[2].measured.starts_with("60000 bytes"), "{}", b[2].measured);
        e.results[0].rps = 7_000.0;
        assert_eq!(
            verdicts(&e),
            [Verdict::Pass, Verdict::Fail, Verdict::Pass],
            "35% of the reference"
        );
        e.results[0].rps = 9_000.0;
        e.results[0].p99_ms = 25.0;
        assert_eq!(verdicts(&e)[0], Verdict::Fail);
        e.results[0].p99_ms = 15.0;
        e.results[0].errors = 1;
        assert_eq!(verdicts(&e)[..2], [Verdict::Fail, Verdict::Fail], "errors");
        e.results[0].errors = 0;
        if let Some(r) = e.sites.as_mut().and_then(|x| x.reader.as_mut()) {
            r.weight.as_mut().unwrap().html_bytes = 80_000;
        }
        assert_eq!(verdicts(&e)[2], Verdict::Fail, "110 KB");
        // The reader pages failed before measuring: every budget fails, saying why.
        e.results.clear();
        e.sites = Some(SitesResult {
            reader: Some(ReaderResult {
                failure: Some("GET /s/x/a: 404".into()),
                ..ReaderResult::default()
            }),
            ..SitesResult::default()
        });
        let b = reader_budgets(&e);
        assert!(b.iter().all(|b| b.verdict == Verdict::Fail));
        assert!(b[0].measured.contains("404"), "{}", b[0].measured);
        assert_eq!(
            budgets(&e)
                .iter()
                .filter(|b| b.name.starts_with("reader page"))
                .count(),
            3
        );
    }
}
