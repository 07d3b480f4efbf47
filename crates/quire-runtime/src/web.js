// The Web platform an integration script sees: what `@gitbook/runtime` and GitBook's
// integrations call (Request, Response, Headers, URL, URLSearchParams, FormData, fetch,
// TextEncoder/TextDecoder, crypto, timers, console, atob/btoa), written over the host's few
// functions in `__quire` (src/host.rs). Bytes cross the boundary as Latin-1 strings (one
// char per byte). This file runs once per call, before the script, in a fresh context.
(function (host) {
  "use strict";
  const g = globalThis;

  const bytesToLatin1 = (bytes) => {
    let out = "";
    for (let i = 0; i < bytes.length; i += 8192) {
      out += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    }
    return out;
  };
  const latin1ToBytes = (s) => {
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  };
  const toBytes = (data) => {
    if (data instanceof Uint8Array) return data;
    if (data instanceof ArrayBuffer) return new Uint8Array(data);
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    throw new TypeError("expected an ArrayBuffer or a typed array");
  };

  class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(s = "") { return latin1ToBytes(host.utf8Encode(String(s))); }
  }
  class TextDecoder {
    constructor(label = "utf-8", options = {}) {
      if (!/^utf-?8$/i.test(label)) throw new RangeError(`unsupported encoding ${label}`);
      this.fatal = !!options.fatal;
    }
    get encoding() { return "utf-8"; }
    decode(data) { return data === undefined ? "" : host.utf8Decode(bytesToLatin1(toBytes(data)), this.fatal); }
  }

  const norm = (name) => String(name).toLowerCase();
  class Headers {
    constructor(init) {
      this._map = new Map();
      if (init instanceof Headers) init.forEach((v, k) => this.append(k, v));
      else if (Array.isArray(init)) init.forEach(([k, v]) => this.append(k, v));
      else if (init && typeof init === "object") Object.keys(init).forEach((k) => this.append(k, init[k]));
    }
    append(k, v) {
      const key = norm(k);
      const prev = this._map.get(key);
      this._map.set(key, prev === undefined ? String(v) : `${prev}, ${v}`);
    }
    set(k, v) { this._map.set(norm(k), String(v)); }
    get(k) { const v = this._map.get(norm(k)); return v === undefined ? null : v; }
    has(k) { return this._map.has(norm(k)); }
    delete(k) { this._map.delete(norm(k)); }
    forEach(f, self) { for (const [k, v] of this.entries()) f.call(self, v, k, this); }
    *entries() { yield* [...this._map.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)); }
    *keys() { for (const [k] of this.entries()) yield k; }
    *values() { for (const [, v] of this.entries()) yield v; }
    [Symbol.iterator]() { return this.entries(); }
  }

  const encodeForm = (s) => encodeURIComponent(s).replace(/%20/g, "+").replace(/[!'()~]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
  const decodeForm = (s) => { try { return decodeURIComponent(s.replace(/\+/g, " ")); } catch (_) { return s; } };
  class URLSearchParams {
    constructor(init = "") {
      this._list = [];
      this._url = null;
      if (init instanceof URLSearchParams) this._list = init._list.map((p) => p.slice());
      else if (Array.isArray(init)) init.forEach(([k, v]) => this._list.push([String(k), String(v)]));
      else if (init && typeof init === "object") Object.keys(init).forEach((k) => this._list.push([k, String(init[k])]));
      else this._parse(String(init));
    }
    _parse(s) {
      this._list = [];
      if (s.startsWith("?")) s = s.slice(1);
      for (const part of s.split("&")) {
        if (!part) continue;
        const i = part.indexOf("=");
        this._list.push(i < 0 ? [decodeForm(part), ""] : [decodeForm(part.slice(0, i)), decodeForm(part.slice(i + 1))]);
      }
    }
    _update() { if (this._url) this._url._setSearch(this.toString()); }
    get size() { return this._list.length; }
    append(k, v) { this._list.push([String(k), String(v)]); this._update(); }
    delete(k) { this._list = this._list.filter(([n]) => n !== k); this._update(); }
    get(k) { const p = this._list.find(([n]) => n === k); return p ? p[1] : null; }
    getAll(k) { return this._list.filter(([n]) => n === k).map(([, v]) => v); }
    has(k) { return this._list.some(([n]) => n === k); }
    set(k, v) {
      const i = this._list.findIndex(([n]) => n === k);
      if (i < 0) this._list.push([String(k), String(v)]);
      else { this._list[i][1] = String(v); this._list = this._list.filter(([n], j) => n !== k || j === i); }
      this._update();
    }
    sort() { this._list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)); this._update(); }
    forEach(f, self) { this._list.forEach(([k, v]) => f.call(self, v, k, this)); }
    *entries() { for (const p of this._list) yield p.slice(); }
    *keys() { for (const [k] of this._list) yield k; }
    *values() { for (const [, v] of this._list) yield v; }
    [Symbol.iterator]() { return this.entries(); }
    toString() { return this._list.map(([k, v]) => `${encodeForm(k)}=${encodeForm(v)}`).join("&"); }
  }

  class URL {
    constructor(input, base) {
      const parts = host.url(String(input), base === undefined ? null : String(base));
      if (!parts) throw new TypeError(`Invalid URL: ${input}`);
      this._set(parts);
    }
    static canParse(input, base) { return !!host.url(String(input), base === undefined ? null : String(base)); }
    _set(json) {
      this._p = JSON.parse(json);
      if (!this._search) { this._search = new URLSearchParams(this._p.search); this._search._url = this; }
      else this._search._parse(this._p.search);
    }
    _setSearch(s) { this._p.search = s ? `?${s}` : ""; this._reparse(this._compose()); }
    _reparse(href) { const parts = host.url(href, null); if (parts) this._set(parts); }
    _compose() {
      const p = this._p;
      const auth = p.username ? `${p.username}${p.password ? ":" + p.password : ""}@` : "";
      return `${p.protocol}//${auth}${p.host}${p.pathname}${p.search}${p.hash}`;
    }
    get href() { return this._p.href; }
    set href(v) { const parts = host.url(String(v), null); if (!parts) throw new TypeError(`Invalid URL: ${v}`); this._set(parts); }
    get origin() { return this._p.origin; }
    get protocol() { return this._p.protocol; }
    get username() { return this._p.username; }
    get password() { return this._p.password; }
    get host() { return this._p.host; }
    get hostname() { return this._p.hostname; }
    get port() { return this._p.port; }
    get pathname() { return this._p.pathname; }
    set pathname(v) { this._p.pathname = String(v).startsWith("/") ? String(v) : `/${v}`; this._reparse(this._compose()); }
    get search() { return this._p.search; }
    set search(v) { v = String(v); this._p.search = !v || v === "?" ? "" : v.startsWith("?") ? v : `?${v}`; this._reparse(this._compose()); }
    get hash() { return this._p.hash; }
    set hash(v) { v = String(v); this._p.hash = !v || v === "#" ? "" : v.startsWith("#") ? v : `#${v}`; this._reparse(this._compose()); }
    get searchParams() { return this._search; }
    toString() { return this.href; }
    toJSON() { return this.href; }
  }

  class Blob {
    constructor(parts = [], options = {}) {
      const chunks = parts.map((p) => (typeof p === "string" ? host.utf8Encode(p) : p instanceof Blob ? p._bytes : bytesToLatin1(toBytes(p))));
      this._bytes = chunks.join("");
      this.type = options.type ? String(options.type).toLowerCase() : "";
    }
    get size() { return this._bytes.length; }
    async text() { return host.utf8Decode(this._bytes, false); }
    async arrayBuffer() { return latin1ToBytes(this._bytes).buffer; }
    slice(start, end, type) { const b = new Blob([], { type }); b._bytes = this._bytes.slice(start, end); return b; }
  }
  class File extends Blob {
    constructor(parts, name, options = {}) { super(parts, options); this.name = String(name); this.lastModified = Date.now(); }
  }

  class FormData {
    constructor() { this._list = []; }
    append(k, v, name) { this._list.push([String(k), v instanceof Blob ? (name !== undefined ? new File([v], name, { type: v.type }) : v) : String(v)]); }
    set(k, v, name) { this.delete(k); this.append(k, v, name); }
    get(k) { const p = this._list.find(([n]) => n === k); return p ? p[1] : null; }
    getAll(k) { return this._list.filter(([n]) => n === k).map(([, v]) => v); }
    has(k) { return this._list.some(([n]) => n === k); }
    delete(k) { this._list = this._list.filter(([n]) => n !== k); }
    forEach(f, self) { this._list.forEach(([k, v]) => f.call(self, v, k, this)); }
    *entries() { for (const p of this._list) yield p.slice(); }
    *keys() { for (const [k] of this._list) yield k; }
    *values() { for (const [, v] of this._list) yield v; }
    [Symbol.iterator]() { return this.entries(); }
  }

  // A body kept as Latin-1 bytes, or a FormData as given (the platform's own requests).
  const BODY = Symbol("body");
  const bodyOf = (init, headers) => {
    if (init === undefined || init === null) return null;
    if (init instanceof FormData) return { form: init };
    let type = null;
    let bytes;
    if (typeof init === "string") { bytes = host.utf8Encode(init); type = "text/plain;charset=UTF-8"; }
    else if (init instanceof URLSearchParams) { bytes = init.toString(); type = "application/x-www-form-urlencoded;charset=UTF-8"; }
    else if (init instanceof Blob) { bytes = init._bytes; type = init.type || null; }
    else bytes = bytesToLatin1(toBytes(init));
    if (type && !headers.has("content-type")) headers.set("content-type", type);
    return { bytes };
  };
  const BodyMixin = (Base) => class extends Base {
    get bodyUsed() { return this._used; }
    get body() { return null; }
    _take() {
      if (this._used) return Promise.reject(new TypeError("Body has already been used"));
      this._used = true;
      return Promise.resolve(this[BODY]);
    }
    async _bytes() {
      const b = await this._take();
      if (!b) return "";
      if (b.form) throw new TypeError("a FormData body can only be read with formData()");
      return b.bytes;
    }
    async text() { return host.utf8Decode(await this._bytes(), false); }
    async json() { return JSON.parse(await this.text()); }
    async arrayBuffer() { return latin1ToBytes(await this._bytes()).buffer; }
    async bytes() { return latin1ToBytes(await this._bytes()); }
    async blob() { const b = new Blob([], { type: this.headers.get("content-type") || "" }); b._bytes = await this._bytes(); return b; }
    async formData() {
      const b = await this._take();
      if (b && b.form) return b.form;
      const type = this.headers.get("content-type") || "";
      if (!/^application\/x-www-form-urlencoded/i.test(type)) throw new TypeError(`cannot read a ${type || "bodyless"} request as form data`);
      const form = new FormData();
      new URLSearchParams(b ? host.utf8Decode(b.bytes, false) : "").forEach((v, k) => form.append(k, v));
      return form;
    }
  };

  class Request extends BodyMixin(Object) {
    constructor(input, init = {}) {
      super();
      const from = input instanceof Request ? input : null;
      this.url = from ? from.url : new URL(String(input)).href;
      this.method = String(init.method || (from ? from.method : "GET")).toUpperCase();
      this.headers = new Headers(init.headers || (from ? from.headers : undefined));
      this.signal = init.signal || (from ? from.signal : new AbortController().signal);
      this.redirect = init.redirect || "follow";
      this[BODY] = init.body !== undefined ? bodyOf(init.body, this.headers) : from ? from[BODY] : null;
      this._used = false;
    }
    clone() { return new Request(this); }
  }

  const STATUS_TEXT = { 200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified", 307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable", 409: "Conflict", 429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable" };
  class Response extends BodyMixin(Object) {
    constructor(body = null, init = {}) {
      super();
      this.status = init.status === undefined ? 200 : init.status | 0;
      if (this.status < 200 || this.status > 599) throw new RangeError(`status ${init.status} is not between 200 and 599`);
      this.statusText = init.statusText !== undefined ? String(init.statusText) : STATUS_TEXT[this.status] || "";
      this.headers = new Headers(init.headers);
      this[BODY] = bodyOf(body, this.headers);
      this._used = false;
      this.url = init.url || "";
      this.redirected = false;
      this.type = "default";
    }
    get ok() { return this.status >= 200 && this.status < 300; }
    clone() { const r = new Response(null, this); r[BODY] = this[BODY]; r.url = this.url; return r; }
    static json(data, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      return new Response(JSON.stringify(data), { ...init, headers });
    }
    static redirect(url, status = 302) { return new Response(null, { status, headers: { location: new URL(url).href } }); }
    static error() { const r = new Response(null, { status: 200 }); r.status = 0; r.type = "error"; return r; }
  }

  class AbortSignal {
    constructor() { this.aborted = false; this.reason = undefined; this._listeners = []; this.onabort = null; }
    addEventListener(type, f) { if (type === "abort") this._listeners.push(f); }
    removeEventListener(type, f) { this._listeners = this._listeners.filter((l) => l !== f); }
    throwIfAborted() { if (this.aborted) throw this.reason; }
    static abort(reason) { const c = new AbortController(); c.abort(reason); return c.signal; }
    static timeout(ms) { const c = new AbortController(); setTimeout(() => c.abort(new Error("TimeoutError")), ms); return c.signal; }
  }
  class AbortController {
    constructor() { this.signal = new AbortSignal(); }
    abort(reason = new Error("AbortError")) {
      const s = this.signal;
      if (s.aborted) return;
      s.aborted = true;
      s.reason = reason;
      const event = { type: "abort", target: s };
      if (s.onabort) s.onabort(event);
      s._listeners.forEach((f) => f(event));
    }
  }

  async function fetch(input, init = {}) {
    const request = input instanceof Request && Object.keys(init).length === 0 ? input : new Request(input, init);
    if (request.signal && request.signal.aborted) throw request.signal.reason;
    let body = "";
    const b = request[BODY];
    if (b && b.form) {
      const params = new URLSearchParams();
      b.form.forEach((v, k) => params.append(k, typeof v === "string" ? v : ""));
      body = params.toString();
      request.headers.set("content-type", "application/x-www-form-urlencoded;charset=UTF-8");
    } else if (b) body = b.bytes;
    const headers = [];
    request.headers.forEach((v, k) => headers.push([k, v]));
    const [status, answerHeaders, answerBody, finalUrl] = host.fetch(request.method, request.url, JSON.stringify(headers), body, request.redirect);
    const response = new Response(null, { status: status < 200 ? 200 : status, headers: JSON.parse(answerHeaders) });
    response.status = status;
    response[BODY] = { bytes: answerBody };
    response.url = finalUrl;
    response.redirected = finalUrl !== request.url;
    return response;
  }

  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  function btoa(s) {
    s = String(s);
    if (/[^\x00-\xff]/.test(s)) throw new Error("btoa: the string has characters outside Latin-1");
    let out = "";
    for (let i = 0; i < s.length; i += 3) {
      const n = (s.charCodeAt(i) << 16) | ((s.charCodeAt(i + 1) || 0) << 8) | (s.charCodeAt(i + 2) || 0);
      out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63] + (i + 1 < s.length ? B64[(n >> 6) & 63] : "=") + (i + 2 < s.length ? B64[n & 63] : "=");
    }
    return out;
  }
  function atob(s) {
    s = String(s).replace(/[\t\n\f\r ]/g, "");
    if (s.length % 4 === 0) s = s.replace(/==?$/, "");
    if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw new Error("atob: not base64");
    let out = "";
    let bits = 0;
    let n = 0;
    for (const c of s) {
      n = (n << 6) | B64.indexOf(c);
      bits += 6;
      if (bits >= 8) { bits -= 8; out += String.fromCharCode((n >> bits) & 255); }
    }
    return out;
  }

  const HASHES = { "SHA-1": "SHA-1", "SHA-256": "SHA-256", "SHA-384": "SHA-384", "SHA-512": "SHA-512" };
  const hashName = (h) => {
    const name = typeof h === "string" ? h : h && h.name;
    const found = HASHES[String(name).toUpperCase()];
    if (!found) throw new Error(`NotSupportedError: hash ${name}`);
    return found;
  };
  class CryptoKey {
    constructor(algorithm, raw, usages, extractable) {
      this.type = "secret";
      this.algorithm = algorithm;
      this.usages = usages;
      this.extractable = extractable;
      this._raw = raw;
    }
  }
  const subtle = {
    async importKey(format, keyData, algorithm, extractable, usages) {
      if (format !== "raw") throw new Error(`NotSupportedError: key format ${format}`);
      const name = typeof algorithm === "string" ? algorithm : algorithm.name;
      if (String(name).toUpperCase() !== "HMAC") throw new Error(`NotSupportedError: algorithm ${name}`);
      return new CryptoKey({ name: "HMAC", hash: { name: hashName(algorithm.hash) } }, bytesToLatin1(toBytes(keyData)), usages, extractable);
    },
    async exportKey(format, key) {
      if (format !== "raw" || !key.extractable) throw new Error("InvalidAccessError: the key cannot be exported");
      return latin1ToBytes(key._raw).buffer;
    },
    async sign(algorithm, key, data) {
      return latin1ToBytes(host.hmac(key.algorithm.hash.name, key._raw, bytesToLatin1(toBytes(data)))).buffer;
    },
    async verify(algorithm, key, signature, data) {
      const expected = host.hmac(key.algorithm.hash.name, key._raw, bytesToLatin1(toBytes(data)));
      const given = bytesToLatin1(toBytes(signature));
      let diff = expected.length ^ given.length;
      for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ given.charCodeAt(i % (given.length || 1));
      return diff === 0;
    },
    async digest(algorithm, data) {
      return latin1ToBytes(host.digest(hashName(algorithm), bytesToLatin1(toBytes(data)))).buffer;
    },
  };
  const crypto = {
    subtle,
    getRandomValues(array) {
      if (!ArrayBuffer.isView(array)) throw new TypeError("getRandomValues takes an integer typed array");
      if (array.byteLength > 65536) throw new Error("QuotaExceededError: at most 65536 bytes");
      new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(latin1ToBytes(host.random(array.byteLength)));
      return array;
    },
    randomUUID() {
      const b = latin1ToBytes(host.random(16));
      b[6] = (b[6] & 0x0f) | 0x40;
      b[8] = (b[8] & 0x3f) | 0x80;
      const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    },
  };

  // Timers run in the order they are due; the host sleeps until the next one (src/call.rs).
  const timers = new Map();
  let timerSeq = 0;
  const addTimer = (f, ms, args, repeat) => {
    const id = ++timerSeq;
    const delay = Math.max(0, Number(ms) || 0);
    timers.set(id, { f, args, due: host.now() + delay, repeat: repeat ? Math.max(1, delay) : 0 });
    return id;
  };
  const timerHooks = {
    next() {
      let best = null;
      for (const [id, t] of timers) if (!best || t.due < best[1].due || (t.due === best[1].due && id < best[0])) best = [id, t];
      return best ? Math.max(0, best[1].due - host.now()) : -1;
    },
    fire() {
      let best = null;
      for (const [id, t] of timers) if (!best || t.due < best[1].due || (t.due === best[1].due && id < best[0])) best = [id, t];
      if (!best) return;
      const [id, t] = best;
      if (t.repeat) t.due = host.now() + t.repeat;
      else timers.delete(id);
      if (typeof t.f === "function") t.f(...t.args);
    },
  };

  const show = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof Error) return `${v.name}: ${v.message}`;
    try { return JSON.stringify(v) ?? String(v); } catch (_) { return String(v); }
  };
  const line = (level) => (...args) => host.log(level, args.map(show).join(" "));
  const console = { log: line("info"), info: line("info"), debug: line("debug"), warn: line("warn"), error: line("error"), trace: line("debug") };

  Object.assign(g, {
    TextEncoder, TextDecoder, Headers, URL, URLSearchParams, Blob, File, FormData, Request, Response,
    AbortController, AbortSignal, fetch, btoa, atob, crypto, CryptoKey, console,
    setTimeout: (f, ms, ...args) => addTimer(f, ms, args, false),
    setInterval: (f, ms, ...args) => addTimer(f, ms, args, true),
    clearTimeout: (id) => { timers.delete(id); },
    clearInterval: (id) => { timers.delete(id); },
    queueMicrotask: (f) => { Promise.resolve().then(f); },
    structuredClone: (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v))),
    performance: { now: () => host.now() - host.started },
    self: g,
  });

  // What the host calls: a POST of the platform's form to the script's `fetch`, and the
  // promises the script handed to `waitUntil`.
  const waits = [];
  const call = (handler, url, headers, fields, fetchBody) => {
    const form = new FormData();
    for (const [k, v] of fields) form.append(k, v);
    if (fetchBody != null) form.append("fetch-body", host.utf8Decode(fetchBody, false));
    const request = new Request(url, { method: "POST", headers: JSON.parse(headers), body: form });
    const ctx = { waitUntil(p) { waits.push(Promise.resolve(p).catch((e) => console.error("waitUntil:", e))); }, passThroughOnException() {} };
    if (!handler || typeof handler.fetch !== "function") throw new TypeError("the script's default export has no fetch(request, env, ctx)");
    return Promise.resolve(handler.fetch(request, {}, ctx)).then(async (response) => {
      if (!(response instanceof Response)) throw new TypeError("the script's fetch did not answer a Response");
      const headers = [];
      response.headers.forEach((v, k) => headers.push([k, v]));
      const body = response[BODY];
      const bytes = !body ? "" : body.form ? "" : body.bytes;
      return [response.status, JSON.stringify(headers), bytes];
    });
  };
  return { call, timers: timerHooks, waiting: () => waits.length, settle: () => Promise.all(waits.splice(0)) };
})
