//! One call: a fresh runtime and context, the Web platform, the script, the POST, and the
//! loop that drives the answer's promise (jobs first, then the next timer) until it settles.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Function, Module, Object, Promise, Runtime, Value};

use crate::budget::{Budget, Tripped};
use crate::host::{self, Logs, State};
use crate::{Answer, Call, Failure, Host, Limits, Outcome};

const WEB: &str = include_str!("web.js");

/// Runs `script`'s `fetch` with `call`, within `limits`. Blocks the thread until the answer
/// (and whatever the script gave `waitUntil`) settles or a limit stops it.
pub fn run(script: &str, call: &Call, host: Arc<dyn Host>, limits: &Limits) -> Outcome {
    let budget = Arc::new(Budget::new(limits.cpu, limits.wall));
    let logs = Rc::new(RefCell::new(Logs::default()));
    let answer = match Runtime::new() {
        Ok(rt) => run_in(&rt, script, call, host, limits, &budget, &logs),
        Err(e) => Err(Failure::Script(format!("no JavaScript runtime: {e}"))),
    };
    let logs = Rc::try_unwrap(logs)
        .map(RefCell::into_inner)
        .unwrap_or_else(|rc| {
            let mut logs = rc.borrow_mut();
            Logs {
                lines: std::mem::take(&mut logs.lines),
                dropped: logs.dropped,
            }
        });
    Outcome {
        answer,
        logs: logs.lines,
        logs_dropped: logs.dropped,
        cpu: budget.used(),
    }
}

fn run_in(
    rt: &Runtime,
    script: &str,
    call: &Call,
    host: Arc<dyn Host>,
    limits: &Limits,
    budget: &Arc<Budget>,
    logs: &Rc<RefCell<Logs>>,
) -> Result<Answer, Failure> {
    rt.set_memory_limit(limits.memory);
    rt.set_max_stack_size(limits.stack);
    let check = budget.clone();
    rt.set_interrupt_handler(Some(Box::new(move || check.check())));
    let ctx = Context::full(rt).map_err(|e| Failure::Script(format!("no JavaScript context: {e}")))?;
    let state = State {
        host,
        budget: budget.clone(),
        limits: limits.clone(),
        logs: logs.clone(),
        fetches: Rc::new(RefCell::new(0)),
    };
    ctx.with(|ctx| {
        let failed = |e: rquickjs::Error| failure(&ctx, e, budget, limits);
        let host = host::object(&ctx, state).map_err(failed)?;
        let make: Function = ctx.eval(WEB).map_err(failed)?;
        let platform: Object = make.call((host,)).map_err(failed)?;
        let timers: Object = platform.get("timers").map_err(failed)?;

        let (module, loaded) = Module::declare(ctx.clone(), "integration.js", script)
            .and_then(|m| m.eval())
            .map_err(failed)?;
        drive(&ctx, &loaded, &timers, budget, limits)?;
        let handler: Value = module.get("default").map_err(failed)?;

        let entry: Function = platform.get("call").map_err(failed)?;
        let headers = serde_json::to_string(&call.headers).map_err(|e| Failure::Script(e.to_string()))?;
        let fields: Vec<Vec<String>> = call
            .fields
            .iter()
            .map(|(k, v)| vec![k.clone(), v.clone()])
            .collect();
        let fetch_body = call.fetch_body.as_deref().map(host::latin1);
        let answered: Promise = entry
            .call((handler, call.url.clone(), headers, fields, fetch_body))
            .map_err(failed)?;
        let value = drive(&ctx, &answered, &timers, budget, limits)?;
        let answered: rquickjs::Array = rquickjs::FromJs::from_js(&ctx, value).map_err(failed)?;
        let status: u16 = answered.get(0).map_err(failed)?;
        let headers: String = answered.get(1).map_err(failed)?;
        let body: String = answered.get(2).map_err(failed)?;

        // What the script handed to waitUntil runs to its end before the call ends.
        let waiting: Function = platform.get("waiting").map_err(failed)?;
        if waiting.call::<_, usize>(()).map_err(failed)? > 0 {
            let settle: Function = platform.get("settle").map_err(failed)?;
            let settled: Promise = settle.call(()).map_err(failed)?;
            drive(&ctx, &settled, &timers, budget, limits)?;
        }

        let headers: Vec<(String, String)> =
            serde_json::from_str(&headers).map_err(|e| Failure::Script(e.to_string()))?;
        let body = host::bytes(&ctx, &body).map_err(failed)?;
        if body.len() > limits.body_bytes {
            return Err(Failure::Script(format!(
                "the answer's body is larger than {} bytes",
                limits.body_bytes
            )));
        }
        Ok(Answer {
            status,
            headers,
            body,
        })
    })
}

/// Runs jobs and timers until `promise` settles: its value, or why it did not.
fn drive<'js>(
    ctx: &Ctx<'js>,
    promise: &Promise<'js>,
    timers: &Object<'js>,
    budget: &Budget,
    limits: &Limits,
) -> Result<Value<'js>, Failure> {
    let failed = |e: rquickjs::Error| failure(ctx, e, budget, limits);
    let next: Function = timers.get("next").map_err(failed)?;
    let fire: Function = timers.get("fire").map_err(failed)?;
    loop {
        while ctx.execute_pending_job() {
            if budget.tripped() != Tripped::None {
                return Err(stopped(budget, limits));
            }
        }
        match promise.state() {
            PromiseState::Resolved | PromiseState::Rejected => {
                return promise
                    .result::<Value>()
                    .unwrap_or(Err(rquickjs::Error::Unknown))
                    .map_err(failed);
            }
            PromiseState::Pending => {}
        }
        let wait: f64 = next.call(()).map_err(failed)?;
        if wait < 0.0 {
            return Err(Failure::Script(
                "the script's answer never settled: it waits on no timer and no fetch".into(),
            ));
        }
        let wait = Duration::from_secs_f64(wait / 1000.0);
        if wait > budget.wall_left() {
            std::thread::sleep(budget.wall_left());
            budget.add_wait(budget.wall_left());
            budget.trip_wall();
            return Err(stopped(budget, limits));
        }
        std::thread::sleep(wait);
        budget.add_wait(wait);
        fire.call::<_, ()>(()).map_err(failed)?;
    }
}

fn stopped(budget: &Budget, limits: &Limits) -> Failure {
    match budget.tripped() {
        Tripped::Wall => Failure::Wall(limits.wall),
        _ => Failure::Cpu(limits.cpu),
    }
}

/// What an error from QuickJS means: a limit that stopped the script, or its exception.
fn failure(ctx: &Ctx<'_>, e: rquickjs::Error, budget: &Budget, limits: &Limits) -> Failure {
    if budget.tripped() != Tripped::None {
        return stopped(budget, limits);
    }
    let message = match e {
        rquickjs::Error::Exception => {
            let thrown = ctx.catch();
            describe(&thrown)
        }
        rquickjs::Error::Allocation => return Failure::Memory(limits.memory),
        other => other.to_string(),
    };
    if message.contains("out of memory") {
        return Failure::Memory(limits.memory);
    }
    Failure::Script(message)
}

fn describe(thrown: &Value<'_>) -> String {
    if let Some(exception) = thrown.as_exception() {
        let message = exception.message().unwrap_or_default();
        let name: String = exception.get("name").unwrap_or_else(|_| "Error".into());
        let stack = exception.stack().unwrap_or_default();
        let first = stack
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string();
        if first.is_empty() {
            format!("{name}: {message}")
        } else {
            format!("{name}: {message} ({first})")
        }
    } else if let Some(s) = thrown.as_string() {
        s.to_string().unwrap_or_default()
    } else {
        format!("{thrown:?}")
    }
}
