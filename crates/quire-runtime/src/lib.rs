//! Integration scripts, run. An integration published with a `script` is an ES module in the
//! Cloudflare module-worker shape that GitBook's CLI builds (`export default { fetch(request,
//! env, ctx) }`); the platform calls it with one POST whose form holds the `event` and the
//! `environment` (docs/integrations.md, "The runtime").
//!
//! Each [`run`] makes a QuickJS runtime and context of its own, installs the Web platform of
//! `web.js` over the host functions of [`host`], evaluates the script, makes the call and
//! drives the promise it answers (jobs, then timers) until it settles, within [`Limits`]. Nothing
//! outlives the call, so one integration's state can never reach another's, and a script that
//! loops or grows is stopped without harming anything but its own call.
//!
//! The crate does no I/O: the script's `fetch` goes to the caller's [`Host`] (quire's outbound
//! policy), its `console` into the [`Outcome`]'s log lines. [`run`] blocks its thread while it
//! runs; callers run it on a blocking thread.

mod budget;
mod call;
mod host;

use std::time::Duration;

pub use call::run;

/// What one call may use.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Time spent running the script's code, not counting its fetches and timers' waits.
    pub cpu: Duration,
    /// Time from start to answer, waits included.
    pub wall: Duration,
    /// Memory the JavaScript heap may hold.
    pub memory: usize,
    /// Native stack the interpreter may use (deep recursion ends in a RangeError).
    pub stack: usize,
    /// Fetches the script may make.
    pub fetches: usize,
    /// Bytes of one fetched body, and of the answer's body.
    pub body_bytes: usize,
    /// Lines of console output kept (more are counted, not kept), each at most 1,000 chars.
    pub log_lines: usize,
}

impl Default for Limits {
    /// Cloudflare's free plan gives a worker 10 ms of CPU; GitBook's integrations render and
    /// answer in well under 100 ms on this engine (the Mermaid bundle loads in about 7 ms).
    fn default() -> Self {
        Limits {
            cpu: Duration::from_millis(500),
            wall: Duration::from_secs(30),
            memory: 64 * 1024 * 1024,
            stack: 512 * 1024,
            fetches: 50,
            body_bytes: 8 * 1024 * 1024,
            log_lines: 100,
        }
    }
}

/// The request the platform makes of the script: a POST of a form to `url` (path `/v1`).
#[derive(Clone, Debug)]
pub struct Call {
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// The form's fields: `event` and `environment`, as JSON text.
    pub fields: Vec<(String, String)>,
    /// The raw body of a proxied HTTP request (the form's `fetch-body`).
    pub fetch_body: Option<Vec<u8>>,
}

/// What the script answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a call gave no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The script ran longer than [`Limits::cpu`].
    Cpu(Duration),
    /// The call took longer than [`Limits::wall`].
    Wall(Duration),
    /// The heap grew past [`Limits::memory`].
    Memory(usize),
    /// The script failed to load, threw, or answered something that is not a Response.
    Script(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Cpu(limit) => write!(
                f,
                "stopped: the script ran longer than its CPU limit of {} ms",
                limit.as_millis()
            ),
            Failure::Wall(limit) => write!(
                f,
                "stopped: the call took longer than its time limit of {} ms",
                limit.as_millis()
            ),
            Failure::Memory(limit) => write!(
                f,
                "stopped: the script used more than its memory limit of {} MB",
                limit / (1024 * 1024)
            ),
            Failure::Script(message) => write!(f, "the script failed: {message}"),
        }
    }
}

/// A console line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// `debug`, `info`, `warn` or `error`.
    pub level: String,
    pub text: String,
}

/// A call's answer or failure, with what the script logged.
#[derive(Debug)]
pub struct Outcome {
    pub answer: Result<Answer, Failure>,
    pub logs: Vec<LogLine>,
    /// Lines past [`Limits::log_lines`], not kept.
    pub logs_dropped: usize,
    /// Time spent running the script's code.
    pub cpu: Duration,
}

/// A request the script makes with `fetch`.
#[derive(Clone, Debug)]
pub struct OutRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Follow redirects (`redirect: "follow"`, the default) or answer them as they are.
    pub follow: bool,
    /// At most this many bytes of the answer's body.
    pub max_bytes: usize,
}

/// What a fetch answered.
#[derive(Clone, Debug)]
pub struct OutResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The URL the answer came from, after redirects.
    pub url: String,
}

/// Where a script's fetches go. Called on the thread that runs the script, which blocks until
/// it returns: the caller's implementation may block (a blocking thread's `Handle::block_on`).
pub trait Host: Send + Sync {
    /// The answer, or why there is none (a refused address, a timeout), which the script sees
    /// as a rejected `fetch` with a TypeError.
    fn fetch(&self, request: OutRequest) -> Result<OutResponse, String>;
}
