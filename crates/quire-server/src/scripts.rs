//! Integration scripts, run here (`quire_store::integrations::scripts::Scripts`): the
//! environment GitBook's runtime expects, in GitBook's shapes; the script from the object store
//! (cached by its content hash); a call on a blocking thread, one of a bounded number at once,
//! in a fresh QuickJS context (`quire-runtime`); the script's `fetch` through the outbound
//! policy (docs/integrations.md, "The runtime").

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quire_store::Store;
use quire_store::error::StoreError;
use quire_store::integrations::bindings::On;
use quire_store::integrations::events::Level;
use quire_store::integrations::scripts::{
    ScriptAnswer, ScriptCall, ScriptContext, ScriptFuture, ScriptOutcome, Scripts,
};
use quire_store::integrations::{self, Integration};
use serde_json::{Value as Json, json};
use tokio::sync::Semaphore;

use crate::api::integrations::wire;
use crate::outbound::{Exchange, Outbound};
use crate::urls::Urls;

/// How scripts run (`QUIRE_SCRIPT_*`).
#[derive(Clone, Debug)]
pub struct ScriptSettings {
    pub limits: quire_runtime::Limits,
    /// Calls running at once in this process; more wait for a slot.
    pub concurrency: usize,
}

impl Default for ScriptSettings {
    fn default() -> Self {
        ScriptSettings {
            limits: quire_runtime::Limits::default(),
            concurrency: 8,
        }
    }
}

/// Scripts kept in memory, by content hash (at most this many bytes).
const SCRIPT_CACHE_BYTES: u64 = 64 * 1024 * 1024;

pub struct ScriptRunner {
    urls: Urls,
    outbound: Arc<Outbound>,
    /// The policy opened to quire's own origin: a script calls the API it is given
    /// (`apiEndpoint`) wherever quire listens, a loopback address included.
    own: Option<(url::Origin, Arc<Outbound>)>,
    blobs: quire_blobs::BlobStore,
    settings: ScriptSettings,
    slots: Arc<Semaphore>,
    scripts: quick_cache::sync::Cache<String, Arc<str>, ScriptWeight>,
    /// Installation tokens handed to scripts, reused until near their expiry.
    tokens: Mutex<HashMap<String, (String, i64)>>,
    /// Held while a token is made, so that a burst of calls makes one, not one each.
    minting: tokio::sync::Mutex<()>,
    /// Calls' environments by (integration, installation, space, site), while the database has
    /// not changed: reading one is about eight queries.
    prepared: quire_store::stamped::StampedCache<PreparedKey, Arc<Prepared>>,
}

type PreparedKey = (String, Option<String>, Option<String>, Option<String>);

/// A call's context with the parts of its environment in GitBook's shapes.
struct Prepared {
    context: ScriptContext,
    integration: Json,
    installation: Option<Json>,
    binding: Option<Json>,
}

#[derive(Clone)]
struct ScriptWeight;

impl quick_cache::Weighter<String, Arc<str>> for ScriptWeight {
    fn weight(&self, _: &String, script: &Arc<str>) -> u64 {
        script.len() as u64 + 64
    }
}

impl ScriptRunner {
    pub fn new(
        urls: Urls,
        outbound: Arc<Outbound>,
        blobs: quire_blobs::BlobStore,
        settings: ScriptSettings,
    ) -> Self {
        let slots = Arc::new(Semaphore::new(settings.concurrency.max(1)));
        let own = url::Url::parse(urls.base()).ok().and_then(|base| {
            let host = base.host_str()?.to_string();
            Some((base.origin(), Arc::new(outbound.also_allowing(&host))))
        });
        ScriptRunner {
            urls,
            own,
            outbound,
            blobs,
            settings,
            slots,
            scripts: quick_cache::sync::Cache::with_weighter(1024, SCRIPT_CACHE_BYTES, ScriptWeight),
            tokens: Mutex::default(),
            minting: tokio::sync::Mutex::new(()),
            prepared: quire_store::stamped::StampedCache::new(1_000),
        }
    }

    async fn script(&self, name: &str, hash: &str) -> Result<Arc<str>, StoreError> {
        if let Some(found) = self.scripts.get(hash) {
            return Ok(found);
        }
        let blob = self.blobs.get(&Integration::blob_namespace(name), hash).await?;
        let bytes = blob
            .bytes()
            .await
            .map_err(|e| StoreError::unavailable(format!("cannot read the integration's script: {e}")))?;
        let text: Arc<str> = String::from_utf8(bytes.to_vec())
            .map_err(|_| StoreError::invalid("the integration's script is not UTF-8 text"))?
            .into();
        self.scripts.insert(hash.to_string(), text.clone());
        Ok(text)
    }

    /// An installation token for the script (`apiTokens.installation`), made once an hour.
    async fn token(&self, store: &Store, context: &ScriptContext) -> Result<Option<String>, StoreError> {
        let Some(installation) = context.installation.clone() else {
            return Ok(None);
        };
        let now = quire_store::clock::now_ms();
        let kept = || {
            let tokens = self.tokens.lock().ok()?;
            let (token, expires) = tokens.get(&installation.id)?;
            (*expires > now + 5 * 60 * 1000).then(|| token.clone())
        };
        if let Some(token) = kept() {
            return Ok(Some(token));
        }
        let _minting = self.minting.lock().await;
        if let Some(token) = kept() {
            return Ok(Some(token));
        }
        let integration = context.integration.clone();
        let id = installation.id.clone();
        let token = store
            .db
            .write(move |c| integrations::tokens::issue_for(c, &installation, &integration))
            .await?;
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.retain(|_, (_, expires)| *expires > now);
            tokens.insert(id, (token.clone(), now + integrations::tokens::TOKEN_TTL_MS));
        }
        Ok(Some(token))
    }

    /// What the call's environment is made of, read once while the database has not changed.
    async fn prepared(&self, store: &Store, call: &ScriptCall) -> Result<Arc<Prepared>, StoreError> {
        let key = store.settings.secrets_key.clone();
        let reading = call.clone();
        let urls = self.urls.clone();
        let found = self
            .prepared
            .get_or_read(
                &store.db,
                (
                    call.integration_id.clone(),
                    call.installation_id.clone(),
                    call.space_id.clone(),
                    call.site_id.clone(),
                ),
                move |c| -> Result<_, StoreError> {
                    let context = integrations::scripts::context(c, &key, &reading)?;
                    let found = integrations::model::load_for(c, &context.integration.name, "")?
                        .ok_or_else(|| StoreError::not_found("the integration was unpublished"))?;
                    let owner = quire_store::orgs::model::load_for(c, &context.integration.org_id, "")?
                        .ok_or_else(|| {
                            StoreError::internal("an integration's owner organization is missing")
                        })?;
                    let name = &context.integration.name;
                    let integration = wire::integration_json(
                        &urls,
                        &found,
                        crate::api::orgs::wire::org_json(&urls, &owner),
                    );
                    let installation = context
                        .installation
                        .as_ref()
                        .map(|i| wire::installation_json(&urls, name, i));
                    let binding = context.binding.as_ref().map(|(on, b)| {
                        wire::binding_json(&urls, name, *on, b, Json::String(b.target.clone()))
                    });
                    Ok(Some(Arc::new(Prepared {
                        context,
                        integration: to_json(&integration),
                        installation: installation.as_ref().map(to_json),
                        binding: binding.as_ref().map(to_json),
                    })))
                },
            )
            .await?;
        found.ok_or_else(|| StoreError::internal("a script's context read found nothing"))
    }

    async fn run(&self, store: &Store, call: ScriptCall) -> Result<ScriptOutcome, StoreError> {
        let prepared = self.prepared(store, &call).await?;
        let Prepared {
            context,
            integration: integration_json,
            installation: installation_json,
            binding: binding_json,
        } = &*prepared;
        let script = self.script(&context.integration.name, &context.script).await?;
        if script.trim().is_empty() {
            return Err(StoreError::not_found(format!(
                "integration {:?} has an empty script (and no webhook URL)",
                context.integration.name
            )));
        }
        let token = self.token(store, context).await?;
        let mut environment = json!({
            "apiEndpoint": self.urls.base(),
            "apiTokens": {
                // quire has no token of the integration itself: an installation's stands for it.
                "integration": token.clone().unwrap_or_default(),
            },
            "integration": integration_json,
            "secrets": context.secrets,
            "signingSecrets": { "integration": context.signing_secret },
            "signingSecret": context.signing_secret,
        });
        if let Some(token) = &token {
            environment["apiTokens"]["installation"] = json!(token);
            environment["authToken"] = json!(token);
            environment["signingSecrets"]["installation"] = json!(context.signing_secret);
        }
        if let Some(installation) = &installation_json {
            environment["installation"] = installation.clone();
        }
        if let (Some((on, _)), Some(binding)) = (&context.binding, &binding_json) {
            let mut value = binding.clone();
            let field = match on {
                On::Space => "space",
                On::Site => "site",
            };
            value[field] = json!(match on {
                On::Space => call.space_id.clone(),
                On::Site => call.site_id.clone(),
            });
            environment[format!("{field}Installation")] = value;
            environment["signingSecrets"][format!("{field}Installation")] = json!(context.signing_secret);
        }
        let request = quire_runtime::Call {
            url: self.urls.api(""),
            headers: vec![("user-agent".into(), "quire".into())],
            fields: vec![
                ("event".into(), call.event.to_string()),
                ("environment".into(), environment.to_string()),
            ],
            fetch_body: call.fetch_body.as_ref().map(|b| b.to_vec()),
        };
        let permit = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| StoreError::unavailable("the script runner is shutting down"))?;
        let host: Arc<dyn quire_runtime::Host> = Arc::new(OutboundHost {
            outbound: self.outbound.clone(),
            own: self.own.clone(),
            handle: tokio::runtime::Handle::current(),
        });
        let limits = self.settings.limits.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let outcome = quire_runtime::run(&script, &request, host, &limits);
            drop(permit);
            outcome
        })
        .await
        .map_err(|e| StoreError::internal(format!("the script's thread failed: {e}")))?;
        let mut logs: Vec<(Level, String)> = outcome
            .logs
            .into_iter()
            .map(|l| {
                let level = match l.level.as_str() {
                    "debug" => Level::Debug,
                    "warn" => Level::Warn,
                    "error" => Level::Error,
                    _ => Level::Info,
                };
                (level, format!("console: {}", l.text))
            })
            .collect();
        if outcome.logs_dropped > 0 {
            logs.push((
                Level::Warn,
                format!("console: {} more lines not kept", outcome.logs_dropped),
            ));
        }
        Ok(ScriptOutcome {
            answer: outcome
                .answer
                .map(|a| ScriptAnswer {
                    status: a.status,
                    headers: a.headers,
                    body: a.body.into(),
                })
                .map_err(|f| f.to_string()),
            logs,
            cpu_ms: u64::try_from(outcome.cpu.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

/// A wire struct as the environment's JSON (they serialize infallibly: no maps with non-string
/// keys).
fn to_json<T: serde::Serialize>(value: &T) -> Json {
    serde_json::to_value(value).unwrap_or(Json::Null)
}

impl Scripts for ScriptRunner {
    fn call<'a>(&'a self, store: &'a Store, call: ScriptCall) -> ScriptFuture<'a> {
        Box::pin(self.run(store, call))
    }
}

/// A script's fetches, made on its blocking thread through the outbound policy.
struct OutboundHost {
    outbound: Arc<Outbound>,
    own: Option<(url::Origin, Arc<Outbound>)>,
    handle: tokio::runtime::Handle,
}

impl quire_runtime::Host for OutboundHost {
    fn fetch(&self, request: quire_runtime::OutRequest) -> Result<quire_runtime::OutResponse, String> {
        let exchange = Exchange {
            method: request.method,
            url: request.url,
            headers: request.headers,
            body: request.body.into(),
            follow: request.follow,
            max_bytes: request.max_bytes,
        };
        let outbound = match (&self.own, url::Url::parse(&exchange.url)) {
            (Some((origin, own)), Ok(url)) if url.origin() == *origin => own,
            _ => &self.outbound,
        };
        let answer = self
            .handle
            .block_on(outbound.exchange(exchange))
            .map_err(|e| e.message)?;
        Ok(quire_runtime::OutResponse {
            status: answer.status,
            headers: answer.headers,
            body: answer.body.to_vec(),
            url: answer.url,
        })
    }
}

/// Renders kept while their `Cache-Control: max-age` lasts, by what was asked (the handler of
/// `POST .../render` makes the key).
pub struct RenderCache(quick_cache::sync::Cache<[u8; 32], (Instant, Rendered), RenderWeight>);

#[derive(Clone)]
pub struct Rendered {
    pub body: bytes::Bytes,
    pub cache_control: String,
}

#[derive(Clone)]
pub struct RenderWeight;

impl quick_cache::Weighter<[u8; 32], (Instant, Rendered)> for RenderWeight {
    fn weight(&self, _: &[u8; 32], (_, r): &(Instant, Rendered)) -> u64 {
        r.body.len() as u64 + r.cache_control.len() as u64 + 64
    }
}

/// How much the kept renders may weigh.
const RENDER_CACHE_BYTES: u64 = 32 << 20;
/// The longest a render is kept, whatever the component asks.
const RENDER_CACHE_MAX: Duration = Duration::from_secs(24 * 3600);

impl Default for RenderCache {
    fn default() -> Self {
        RenderCache(quick_cache::sync::Cache::with_weighter(
            4096,
            RENDER_CACHE_BYTES,
            RenderWeight,
        ))
    }
}

impl RenderCache {
    /// The render kept under `key`, while it lasts.
    pub fn get(&self, key: &[u8; 32]) -> Option<Rendered> {
        let (until, rendered) = self.0.get(key)?;
        if until > Instant::now() {
            return Some(rendered);
        }
        self.0.remove(key);
        None
    }

    /// Keeps a render for `max_age` (at most a day).
    pub fn keep(&self, key: [u8; 32], max_age: Duration, body: bytes::Bytes, cache_control: &str) {
        let keep = max_age.min(RENDER_CACHE_MAX);
        if !keep.is_zero() {
            let rendered = Rendered {
                body,
                cache_control: cache_control.to_string(),
            };
            self.0.insert(key, (Instant::now() + keep, rendered));
        }
    }

    pub fn size(&self) -> quire_store::stamped::CacheSize {
        quire_store::stamped::CacheSize {
            name: "integration_renders",
            unit: "bytes",
            items: self.0.len(),
            weight: self.0.weight(),
            capacity: RENDER_CACHE_BYTES,
        }
    }
}
