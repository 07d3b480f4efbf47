//! The one outbound policy: every request quire makes to another server (files given by URL in
//! content batches, OpenAPI descriptions and the files they refer to, event deliveries)
//! goes through [`Outbound`]. The host is resolved once and every address checked: private,
//! loopback, link-local, shared, multicast, documentation and reserved addresses are refused, in
//! any spelling the URL parser accepts (`http://2130706433/`, `http://0x7f000001/`,
//! `http://[::ffff:127.0.0.1]/` all parse to 127.0.0.1 first), and the connection is pinned to
//! a checked address, so the name cannot be rebound between the check and the connection.
//! Redirects are followed by hand, at most [`MAX_REDIRECTS`], each hop checked the same way.
//! Only configuration opens a refused address (`QUIRE_OUTBOUND_ALLOW`: hosts or CIDRs), which
//! is how tests reach a server on 127.0.0.1.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::http::header;
use futures_util::StreamExt;
use quire_store::outbound::{
    Fetch, FetchError, FetchErrorKind, FetchFuture, Fetched, POSTED_BODY_MAX, PostFuture, Posted,
};

/// How many redirects one fetch follows.
pub const MAX_REDIRECTS: usize = 5;
/// How long one request may take, body included, unless configured otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Hosts and networks that may be reached although the policy refuses them.
#[derive(Clone, Debug, Default)]
pub struct Allow {
    hosts: Vec<String>,
    networks: Vec<(IpAddr, u8)>,
}

impl Allow {
    /// Parses a comma-separated list of host names (`localhost`, `specs.internal`) and CIDRs
    /// (`127.0.0.0/8`, `10.1.2.3`, `::1/128`).
    pub fn parse(list: &str) -> Result<Allow, String> {
        let mut allow = Allow::default();
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (address, bits) = match item.split_once('/') {
                Some((a, b)) => (a, Some(b)),
                None => (item, None),
            };
            match address.trim_matches(['[', ']']).parse::<IpAddr>() {
                Ok(ip) => {
                    let max = if ip.is_ipv4() { 32 } else { 128 };
                    let bits = match bits {
                        None => max,
                        Some(b) => b
                            .parse::<u8>()
                            .ok()
                            .filter(|b| *b <= max)
                            .ok_or_else(|| format!("invalid prefix length in {item:?}"))?,
                    };
                    allow.networks.push((ip, bits));
                }
                Err(_) if bits.is_none() && !item.contains([' ', ':', '@']) => {
                    allow.hosts.push(item.to_ascii_lowercase());
                }
                Err(_) => return Err(format!("{item:?} is neither a host name nor an address or CIDR")),
            }
        }
        Ok(allow)
    }

    fn host(&self, host: &str) -> bool {
        self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    fn address(&self, ip: IpAddr) -> bool {
        self.networks
            .iter()
            .any(|(net, bits)| in_network(ip, *net, *bits))
    }
}

fn in_network(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

/// The outbound client with its policy.
#[derive(Clone, Debug)]
pub struct Outbound {
    allow: Allow,
    timeout: Duration,
    /// The client POSTs share (event deliveries come in bursts): its resolver applies the
    /// policy to every address a name resolves to, so connections can be pooled and still go
    /// only where the policy allows. Made on first use (building one loads the TLS roots).
    posting: Arc<OnceLock<reqwest::Client>>,
}

/// Resolves names for the shared client, refusing a name any of whose addresses the policy
/// refuses (as [`Outbound::address`] does for a fetch), and answering only checked addresses.
#[derive(Clone, Debug)]
struct PolicyResolver {
    allow: Allow,
    timeout: Duration,
}

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let this = self.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let refused = |m: String| -> Box<dyn std::error::Error + Send + Sync> {
                Box::new(std::io::Error::other(m))
            };
            let found: Vec<SocketAddr> =
                tokio::time::timeout(this.timeout, tokio::net::lookup_host((host.as_str(), 0)))
                    .await
                    .map_err(|_| refused(format!("resolving {host} timed out")))?
                    .map_err(|e| refused(format!("cannot resolve {host}: {e}")))?
                    .collect();
            if found.is_empty() {
                return Err(refused(format!("{host} resolves to no address")));
            }
            if !this.allow.host(&host)
                && let Some(bad) = found
                    .iter()
                    .find(|a| is_forbidden_address(a.ip()) && !this.allow.address(a.ip()))
            {
                return Err(refused(format!(
                    "{host} is {}, a private or reserved address that quire does not reach \
                     (QUIRE_OUTBOUND_ALLOW opens it)",
                    bad.ip()
                )));
            }
            let addrs: reqwest::dns::Addrs = Box::new(found.into_iter());
            Ok(addrs)
        })
    }
}

impl Outbound {
    pub fn new(allow: Allow, timeout: Duration) -> Outbound {
        Outbound {
            allow,
            timeout,
            posting: Arc::default(),
        }
    }

    /// The same policy, opening one more host (quire's own, for an integration script's calls
    /// to the API it was given: `apiEndpoint`).
    pub fn also_allowing(&self, host: &str) -> Outbound {
        let mut allow = self.allow.clone();
        allow.hosts.push(host.to_ascii_lowercase());
        if let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
            allow.networks.push((ip, if ip.is_ipv4() { 32 } else { 128 }));
        }
        Outbound::new(allow, self.timeout)
    }

    /// The shared client, for a URL the policy lets it reach: http or https, and an address
    /// in the URL checked here (a name is checked by the client's resolver; an address is not
    /// resolved).
    async fn client_for(&self, url: &url::Url) -> Result<&reqwest::Client, FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::new(
                FetchErrorKind::Refused,
                format!("only http and https URLs are reached, not {}", url.scheme()),
            ));
        }
        if matches!(url.host(), Some(url::Host::Ipv4(_) | url::Host::Ipv6(_))) {
            self.address(url).await?;
        }
        self.posting_client()
    }

    fn posting_client(&self) -> Result<&reqwest::Client, FetchError> {
        if let Some(client) = self.posting.get() {
            return Ok(client);
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(PolicyResolver {
                allow: self.allow.clone(),
                timeout: self.timeout,
            }))
            .build()
            .map_err(|e| FetchError::new(FetchErrorKind::Failed, e.to_string()))?;
        Ok(self.posting.get_or_init(|| client))
    }

    /// The address to connect to for `url`'s host, or why it may not be reached.
    async fn address(&self, url: &url::Url) -> Result<SocketAddr, FetchError> {
        let refused = |m: String| FetchError::new(FetchErrorKind::Refused, m);
        let port = url
            .port_or_known_default()
            .ok_or_else(|| refused(format!("{url} has no port")))?;
        let (name, addresses): (String, Vec<SocketAddr>) = match url.host() {
            Some(url::Host::Ipv4(ip)) => (ip.to_string(), vec![SocketAddr::new(IpAddr::V4(ip), port)]),
            Some(url::Host::Ipv6(ip)) => (ip.to_string(), vec![SocketAddr::new(IpAddr::V6(ip), port)]),
            Some(url::Host::Domain(domain)) => {
                let found = tokio::time::timeout(self.timeout, tokio::net::lookup_host((domain, port)))
                    .await
                    .map_err(|_| {
                        FetchError::new(FetchErrorKind::Timeout, format!("resolving {domain} timed out"))
                    })?
                    .map_err(|e| {
                        FetchError::new(FetchErrorKind::Failed, format!("cannot resolve {domain}: {e}"))
                    })?
                    .collect();
                (domain.to_string(), found)
            }
            None => return Err(refused(format!("{url} has no host"))),
        };
        let first = *addresses.first().ok_or_else(|| {
            FetchError::new(FetchErrorKind::Failed, format!("{name} resolves to no address"))
        })?;
        if self.allow.host(&name) {
            return Ok(first);
        }
        if let Some(bad) = addresses
            .iter()
            .find(|a| is_forbidden_address(a.ip()) && !self.allow.address(a.ip()))
        {
            return Err(refused(format!(
                "{name} is {}, a private or reserved address that quire does not fetch \
                 (QUIRE_OUTBOUND_ALLOW opens it)",
                bad.ip()
            )));
        }
        Ok(first)
    }

    /// GETs `raw`, at most `max_bytes` of its body, following redirects within the policy.
    pub async fn get(&self, raw: &str, max_bytes: usize) -> Result<Fetched, FetchError> {
        let failed = |m: String| FetchError::new(FetchErrorKind::Failed, m);
        let mut url = url::Url::parse(raw).map_err(|e| failed(format!("invalid URL {raw:?}: {e}")))?;
        for _ in 0..=MAX_REDIRECTS {
            if !matches!(url.scheme(), "http" | "https") {
                return Err(FetchError::new(
                    FetchErrorKind::Refused,
                    format!("only http and https URLs are fetched, not {}", url.scheme()),
                ));
            }
            let address = self.address(&url).await?;
            let host = url
                .host_str()
                .unwrap_or_default()
                .trim_matches(['[', ']'])
                .to_string();
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .resolve(&host, address)
                .timeout(self.timeout)
                .build()
                .map_err(|e| failed(e.to_string()))?;
            let response = client
                .get(url.clone())
                .send()
                .await
                .map_err(|e| transport(&url, &e))?;
            if response.status().is_redirection() {
                url = next_hop(&url, &response)?;
                continue;
            }
            if !response.status().is_success() {
                return Err(failed(format!("{url} answered {}", response.status())));
            }
            let content_type = response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.split(';').next().unwrap_or(v).trim().to_string());
            let body = read_bounded(response, &url, max_bytes).await?;
            return Ok(Fetched {
                bytes: body.into(),
                content_type,
                final_url: url.to_string(),
            });
        }
        Err(failed(format!("{raw} redirects more than {MAX_REDIRECTS} times")))
    }
}

impl Outbound {
    /// POSTs `body` to `raw` within the policy (the address is checked as for a GET), with
    /// `timeout` for the whole exchange; redirects are not followed.
    pub async fn post(
        &self,
        raw: &str,
        headers: &[(String, String)],
        body: bytes::Bytes,
        timeout: Duration,
    ) -> Result<Posted, FetchError> {
        let failed = |m: String| FetchError::new(FetchErrorKind::Failed, m);
        let url = url::Url::parse(raw).map_err(|e| failed(format!("invalid URL {raw:?}: {e}")))?;
        let client = self.client_for(&url).await?;
        let mut request = client.post(url.clone()).timeout(timeout).body(body);
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        // The resolver's refusal is the source of the error: say it.
        let response = request.send().await.map_err(|e| sent_error(&url, &e))?;
        let status = response.status().as_u16();
        let mut kept = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let Ok(chunk) = chunk else { break };
            kept.extend_from_slice(&chunk[..chunk.len().min(POSTED_BODY_MAX - kept.len())]);
            if kept.len() >= POSTED_BODY_MAX {
                break;
            }
        }
        Ok(Posted {
            status,
            body: String::from_utf8_lossy(&kept).into_owned(),
        })
    }
}

/// A request an integration script makes (`fetch`), and its answer.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: bytes::Bytes,
    pub follow: bool,
    pub max_bytes: usize,
}

#[derive(Clone, Debug)]
pub struct Exchanged {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: bytes::Bytes,
    pub url: String,
}

impl Outbound {
    /// Any method, within the policy, each redirect hop checked as the first (a 303, or a
    /// 301/302 after a POST, becomes a GET without body, as browsers do); at most `max_bytes`
    /// of the answer's body, and [`Outbound`]'s timeout for the whole exchange.
    pub async fn exchange(&self, request: Exchange) -> Result<Exchanged, FetchError> {
        let failed = |m: String| FetchError::new(FetchErrorKind::Failed, m);
        let mut url = url::Url::parse(&request.url)
            .map_err(|e| failed(format!("invalid URL {:?}: {e}", request.url)))?;
        let mut method = reqwest::Method::from_bytes(request.method.as_bytes())
            .map_err(|_| failed(format!("invalid method {:?}", request.method)))?;
        let mut body = request.body;
        let deadline = tokio::time::Instant::now() + self.timeout;
        for _ in 0..=MAX_REDIRECTS {
            let client = self.client_for(&url).await?;
            let mut builder = client
                .request(method.clone(), url.clone())
                .timeout(deadline.saturating_duration_since(tokio::time::Instant::now()));
            for (name, value) in &request.headers {
                // The client sets these from the body and the URL.
                if !matches!(
                    name.to_ascii_lowercase().as_str(),
                    "host" | "content-length" | "transfer-encoding"
                ) {
                    builder = builder.header(name.as_str(), value.as_str());
                }
            }
            if !body.is_empty() {
                builder = builder.body(body.clone());
            }
            let response = builder.send().await.map_err(|e| sent_error(&url, &e))?;
            let status = response.status();
            if request.follow && status.is_redirection() && status != reqwest::StatusCode::NOT_MODIFIED {
                url = next_hop(&url, &response)?;
                if status == reqwest::StatusCode::SEE_OTHER
                    || (matches!(status.as_u16(), 301 | 302) && method == reqwest::Method::POST)
                {
                    method = reqwest::Method::GET;
                    body = bytes::Bytes::new();
                }
                continue;
            }
            let headers = response
                .headers()
                .iter()
                .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
                .collect();
            let kept = read_bounded(response, &url, request.max_bytes).await?;
            return Ok(Exchanged {
                status: status.as_u16(),
                headers,
                body: kept.into(),
                url: url.to_string(),
            });
        }
        Err(failed(format!(
            "{} redirects more than {MAX_REDIRECTS} times",
            request.url
        )))
    }
}

/// Where a redirect answer sends the request next.
fn next_hop(url: &url::Url, response: &reqwest::Response) -> Result<url::Url, FetchError> {
    let failed = |m: String| FetchError::new(FetchErrorKind::Failed, m);
    let location = response
        .headers()
        .get(header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .ok_or_else(|| failed(format!("{url} redirects without a Location")))?;
    url.join(location)
        .map_err(|e| failed(format!("{url} redirects to an invalid URL: {e}")))
}

/// The answer's body, refused past `max_bytes` (by its length when it says one, else as it
/// streams in).
async fn read_bounded(
    response: reqwest::Response,
    url: &url::Url,
    max_bytes: usize,
) -> Result<Vec<u8>, FetchError> {
    let too_large = || {
        FetchError::new(
            FetchErrorKind::TooLarge,
            format!("{url} is larger than {max_bytes} bytes"),
        )
    };
    if response.content_length().is_some_and(|n| n > max_bytes as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| transport(url, &e))?;
        if body.len() + chunk.len() > max_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A send's error with its causes, so that the resolver's refusal is said.
fn sent_error(url: &url::Url, e: &reqwest::Error) -> FetchError {
    let mut message = transport(url, e).message;
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        message = format!("{message}: {cause}");
        source = cause.source();
    }
    FetchError::new(
        if e.is_timeout() {
            FetchErrorKind::Timeout
        } else if message.contains("quire does not reach") {
            FetchErrorKind::Refused
        } else {
            FetchErrorKind::Failed
        },
        message,
    )
}

fn transport(url: &url::Url, e: &reqwest::Error) -> FetchError {
    if e.is_timeout() {
        FetchError::new(FetchErrorKind::Timeout, format!("{url} did not answer in time"))
    } else {
        FetchError::new(FetchErrorKind::Failed, format!("cannot fetch {url}: {e}"))
    }
}

impl Fetch for Outbound {
    fn fetch<'a>(&'a self, url: &'a str, max_bytes: usize) -> FetchFuture<'a> {
        Box::pin(self.get(url, max_bytes))
    }

    fn post<'a>(
        &'a self,
        url: &'a str,
        headers: &'a [(String, String)],
        body: bytes::Bytes,
        timeout: Duration,
    ) -> PostFuture<'a> {
        Box::pin(self.post(url, headers, body, timeout))
    }
}

/// Whether an address is one a server-side fetch must never reach: loopback, private,
/// link-local, shared, documentation, multicast, unspecified and other reserved ranges. An IPv6
/// address that carries an IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated, 6to4,
/// NAT64) is judged by that IPv4 address, since that is where packets to it end up; Teredo
/// and the local-use NAT64 prefix are refused whatever they carry.
pub fn is_forbidden_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_forbidden_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Embedded::V4(v4) => is_forbidden_v4(v4),
            Embedded::Refused => true,
            Embedded::None => {
                let s = v6.segments();
                v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_multicast()
                    || (s[0] & 0xfe00) == 0xfc00
                    || (s[0] & 0xffc0) == 0xfe80
                    || (s[0] & 0xffc0) == 0xfec0
                    || s[0] == 0x2001 && s[1] == 0x0db8
                    || s[0] == 0x0100 && s[1] == 0 && s[2] == 0 && s[3] == 0
            }
        },
    }
}

fn is_forbidden_v4(v4: std::net::Ipv4Addr) -> bool {
    let o = v4.octets();
    v4.is_private()
        || v4.is_loopback()
        || v4.is_link_local()
        || v4.is_broadcast()
        || v4.is_documentation()
        || v4.is_unspecified()
        || v4.is_multicast()
        || o[0] == 0
        || (o[0] == 100 && (64..128).contains(&o[1]))
        || (o[0] == 192 && o[1] == 0 && o[2] == 0)
        || (o[0] == 198 && (18..20).contains(&o[1]))
        || o[0] >= 240
}

/// What IPv4 address an IPv6 address leads to.
enum Embedded {
    V4(std::net::Ipv4Addr),
    /// A form whose IPv4 destination cannot be told from the address (Teredo, local-use NAT64).
    Refused,
    None,
}

fn embedded_v4(v6: std::net::Ipv6Addr) -> Embedded {
    let s = v6.segments();
    let low = || std::net::Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    match s {
        // IPv4-mapped ::ffff:a.b.c.d
        [0, 0, 0, 0, 0, 0xffff, _, _] => Embedded::V4(low()),
        // IPv4-compatible ::a.b.c.d (deprecated; also covers :: and ::1, judged as 0.0.0.x)
        [0, 0, 0, 0, 0, 0, _, _] => Embedded::V4(low()),
        // IPv4-translated ::ffff:0:a.b.c.d
        [0, 0, 0, 0, 0xffff, 0, _, _] => Embedded::V4(low()),
        // NAT64 well-known prefix 64:ff9b::/96
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Embedded::V4(low()),
        // NAT64 local-use prefix 64:ff9b:1::/48: where the IPv4 address sits depends on the
        // operator's prefix length, and the translator is a private one.
        [0x64, 0xff9b, 1, ..] => Embedded::Refused,
        // 6to4 2002:aabb:ccdd::/48
        [0x2002, hi, lo, ..] => Embedded::V4(std::net::Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))),
        // Teredo 2001::/32: the client address is obfuscated and reached through a relay.
        [0x2001, 0, ..] => Embedded::Refused,
        _ => Embedded::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_reserved_addresses_are_refused() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
        ] {
            assert!(is_forbidden_address(bad.parse().unwrap()), "{bad}");
        }
        for good in ["93.184.216.34", "8.8.8.8", "2606:4700::1111"] {
            assert!(!is_forbidden_address(good.parse().unwrap()), "{good}");
        }
    }

    /// Every IPv6 form that carries an IPv4 address, with a private (127.0.0.1, 10.0.0.1) and a
    /// public (93.184.216.34 = 5db8:d822) embedded address: the IPv4 rules decide, except for
    /// the forms whose destination cannot be told, refused either way.
    #[test]
    fn ipv6_forms_that_embed_an_ipv4_address_are_judged_by_it() {
        let table: &[(&str, &str, bool)] = &[
            // (form, address, forbidden)
            ("IPv4-mapped", "::ffff:127.0.0.1", true),
            ("IPv4-mapped", "::ffff:10.0.0.1", true),
            ("IPv4-mapped", "::ffff:93.184.216.34", false),
            ("IPv4-compatible", "::127.0.0.1", true),
            ("IPv4-compatible", "::10.0.0.1", true),
            ("IPv4-compatible", "::93.184.216.34", false),
            ("IPv4-translated", "::ffff:0:127.0.0.1", true),
            ("IPv4-translated", "::ffff:0:10.0.0.1", true),
            ("IPv4-translated", "::ffff:0:93.184.216.34", false),
            ("6to4", "2002:7f00:1::", true),
            ("6to4", "2002:a00:1::1", true),
            ("6to4", "2002:5db8:d822::1", false),
            ("NAT64", "64:ff9b::127.0.0.1", true),
            ("NAT64", "64:ff9b::10.0.0.1", true),
            ("NAT64", "64:ff9b::93.184.216.34", false),
            ("NAT64 local-use", "64:ff9b:1::127.0.0.1", true),
            ("NAT64 local-use", "64:ff9b:1::93.184.216.34", true),
            ("Teredo", "2001:0:4136:e378:8000:63bf:80ff:fffe", true),
            ("Teredo", "2001:0:5db8:d822:8000:63bf:a247:2ddd", true),
        ];
        for (form, address, forbidden) in table {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!(is_forbidden_address(ip), *forbidden, "{form} {address}");
        }
    }

    /// Every spelling of a refused address is refused before anything is connected to: the
    /// URL parser reads decimal, hex, octal and short IPv4 forms and IPv4-mapped IPv6 as the
    /// address they are, and names are judged by what they resolve to.
    #[tokio::test]
    async fn every_spelling_of_a_refused_address_is_refused() {
        let outbound = Outbound::new(Allow::default(), Duration::from_secs(5));
        for url in [
            "http://127.0.0.1:9/",
            "http://2130706433:9/",
            "http://0x7f000001:9/",
            "http://0x7f.0x0.0x0.0x1:9/",
            "http://017700000001:9/",
            "http://0177.0.0.1:9/",
            "http://127.1:9/",
            "http://[::ffff:127.0.0.1]:9/",
            "http://[::ffff:7f00:1]:9/",
            "http://[::1]:9/",
            "http://[0:0:0:0:0:0:0:1]:9/",
            "http://localhost:9/",
            "http://0:9/",
            "http://0.0.0.0:9/",
            "http://10.0.0.1:9/",
            "http://172.16.0.1:9/",
            "http://192.168.0.1:9/",
            "http://169.254.169.254/latest/meta-data/",
            "http://100.64.0.1:9/",
            "http://[fe80::1]:9/",
            "http://[fc00::1]:9/",
            "http://224.0.0.1:9/",
            "http://255.255.255.255:9/",
            "http://[64:ff9b::7f00:1]:9/",
            "http://[2002:7f00:1::]:9/",
        ] {
            let error = outbound.get(url, 10).await.unwrap_err();
            assert_eq!(error.kind, FetchErrorKind::Refused, "{url}: {error}");
            assert!(error.message.contains("private or reserved"), "{url}: {error}");
        }
        let error = outbound.get("ftp://example.com/x", 10).await.unwrap_err();
        assert_eq!(error.kind, FetchErrorKind::Refused);
        let error = outbound.get("file:///etc/passwd", 10).await.unwrap_err();
        assert_eq!(error.kind, FetchErrorKind::Refused);
    }

    /// Deliveries POST through a shared client whose resolver applies the policy: a name and an
    /// address are refused alike, before any connection.
    #[tokio::test]
    async fn posts_are_refused_where_fetches_are() {
        let outbound = Outbound::new(Allow::default(), Duration::from_secs(5));
        for url in [
            "http://127.0.0.1:9/hook",
            "http://0x7f000001:9/hook",
            "http://[::1]:9/hook",
            "http://localhost:9/hook",
            "http://169.254.169.254/latest",
        ] {
            let error = outbound
                .post(url, &[], bytes::Bytes::from_static(b"{}"), Duration::from_secs(5))
                .await
                .unwrap_err();
            assert!(error.message.contains("private or reserved"), "{url}: {error}");
        }
        let error = outbound
            .post(
                "ftp://example.com/x",
                &[],
                bytes::Bytes::new(),
                Duration::from_secs(5),
            )
            .await
            .unwrap_err();
        assert_eq!(error.kind, FetchErrorKind::Refused);
    }

    #[test]
    fn the_allow_list_takes_hosts_and_networks() {
        let allow = Allow::parse("localhost, 127.0.0.0/8,::1,10.1.2.3").unwrap();
        assert!(allow.host("LOCALHOST"));
        assert!(allow.address("127.9.9.9".parse().unwrap()));
        assert!(allow.address("::1".parse().unwrap()));
        assert!(allow.address("10.1.2.3".parse().unwrap()));
        assert!(!allow.address("10.1.2.4".parse().unwrap()));
        assert!(!allow.address("128.0.0.1".parse().unwrap()));
        assert!(Allow::parse("127.0.0.0/33").is_err());
        assert!(Allow::parse("http://x").is_err());
        assert!(Allow::parse("").unwrap().hosts.is_empty());
    }
}
