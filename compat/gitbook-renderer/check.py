"""Drives GitBook's renderer in front of quire (see run.sh): publishes the imported space as a
site on a hostname, crawls every page through the renderer, follows its internal links and
images, checks a visitor-auth site and an adaptive section, and takes screenshots.

    python3 check.py --api URL --token T --org ORG --space SPACE --renderer URL --out DIR

Exits non-zero with the list of what failed. Standard library only."""

import argparse
import base64
import gzip
import hashlib
import hmac
import html.parser
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

HOST = "docs.quire.test"
failures = []


def fail(message):
    failures.append(message)
    print(f"FAIL {message}", flush=True)


class Api:
    def __init__(self, base, token):
        self.base, self.token = base.rstrip("/"), token

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                text = resp.read()
        except urllib.error.HTTPError as e:
            raise SystemExit(f"{method} {path}: {e.code} {e.read()[:500]!r}")
        return json.loads(text) if text else None


def fetch(url, timeout=120):
    """(status, content type, body bytes) of a GET, without raising on 4xx/5xx."""
    req = urllib.request.Request(url, headers={"User-Agent": "quire-compat-check"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def fetch_as_browser(url):
    """As [`fetch`], following redirects as a browser does: with the cookies they set (the
    renderer keeps a visitor's token and `visitor.*` claims in cookies, marked Secure, which a
    cookie jar would not send back over http)."""
    opener = urllib.request.build_opener(NoRedirect)
    cookies = {}
    for _ in range(6):
        headers = {"User-Agent": "quire-compat-check"}
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        try:
            with opener.open(urllib.request.Request(url, headers=headers), timeout=120) as resp:
                return resp.status, resp.headers.get("Content-Type", ""), resp.read()
        except urllib.error.HTTPError as e:
            if e.code not in (301, 302, 303, 307, 308):
                return e.code, e.headers.get("Content-Type", ""), e.read()
            for cookie in e.headers.get_all("Set-Cookie") or []:
                name, _, value = cookie.split(";")[0].partition("=")
                cookies[name.strip()] = value.strip()
            url = urllib.parse.urljoin(url, e.headers["Location"])
    return 310, "", b"too many redirects"


class Page(html.parser.HTMLParser):
    """The title, the visible text, the links and the images of an HTML page."""

    def __init__(self):
        super().__init__()
        self.title, self.text, self.links, self.images = "", [], [], []
        self._in_title, self._skip = False, 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "title":
            self._in_title = True
        elif tag in ("script", "style"):
            self._skip += 1
        elif tag == "a" and a.get("href"):
            self.links.append(a["href"])
        elif tag == "img" and a.get("src"):
            self.images.append(a["src"])

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.text.append(data)


def parse(body):
    page = Page()
    page.feed(body.decode("utf-8", "replace"))
    page.body_text = " ".join(" ".join(page.text).split())
    return page


def shows(page, text):
    """Whether the page's visible text holds `text`, whatever the white space between."""
    return "".join(text.split()) in "".join(page.body_text.split())


def flatten(pages, out):
    for p in pages:
        if p.get("type") == "document":
            out.append(p)
        flatten(p.get("pages", []), out)
    return out


def words_of(markdown):
    """The first words of the page's first plain paragraph, as they show as text: up to the
    first markup that a renderer turns into something else (links, HTML, emphasis, code,
    expressions, escapes); empty when no paragraph starts with a dozen plain characters."""
    for block in markdown.split("\n\n"):
        line = " ".join(block.split())
        if not line or line.startswith(("#", "{", "!", "|", "`", "*", "-", "+", ">", "<", "$")):
            continue
        if line[0].isdigit() and "." in line[:4]:
            continue
        plain = re.split(r"[\[\]<>{}*_`~$\\!]", line)[0].strip()[:40]
        if len(plain) >= 12:
            return plain
    return ""


def visitor_token(key, site, claims):
    def b64(raw):
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64(json.dumps({**claims, "aud": site, "exp": int(time.time()) + 600}).encode())
    signature = hmac.new(key.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(signature)}"


def screenshot(url, path):
    subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--window-size=1280,900", "--virtual-time-budget=8000", f"--screenshot={path}", url],
        check=False, capture_output=True, timeout=120,
    )
    print(f"screenshot {path}", flush=True)


def ttfb(url, headers=None):
    """Seconds to the first byte of a GET (a fresh connection)."""
    req = urllib.request.Request(url, headers={"User-Agent": "quire-compat-check", **(headers or {})})
    started = time.monotonic()
    with urllib.request.urlopen(req, timeout=120) as resp:
        resp.read(1)
        first = time.monotonic() - started
        resp.read()
    return first


def first_load_bytes(url, origin, headers=None):
    """Bytes a browser downloads for a first view, compressed as served (gzip or br asked):
    the HTML, its scripts, stylesheets, images and fonts preloaded."""

    class Assets(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.urls = []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "script" and a.get("src"):
                self.urls.append(a["src"])
            elif tag == "link" and a.get("href") and a.get("rel") in ("stylesheet", "preload", "icon"):
                self.urls.append(a["href"])
            elif tag == "img" and a.get("src"):
                self.urls.append(a["src"])

    def get(u):
        req = urllib.request.Request(u, headers={"Accept-Encoding": "gzip", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.read()
        except urllib.error.HTTPError as e:
            return e.read()

    page = get(url)
    assets = Assets()
    try:
        assets.feed(gzip.decompress(page).decode("utf-8", "replace"))
    except OSError:
        assets.feed(page.decode("utf-8", "replace"))
    total, count = len(page), 1
    for u in dict.fromkeys(assets.urls):
        if u.startswith("data:"):
            continue
        full = u if u.startswith("http") else origin + u
        total += len(get(full))
        count += 1
    return total, count


def wrk(url, headers=None):
    """Requests per second and p99 (ms) at 16 connections for 15 s (wrk)."""
    cmd = ["wrk", "-t2", "-c16", "-d15s", "--latency", url]
    for k, v in (headers or {}).items():
        cmd[1:1] = ["-H", f"{k}: {v}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rps = float(out.split("Requests/sec:")[1].split()[0])
    p99 = out.split(" 99%")[1].split()[0]
    value = float(p99.rstrip("mus"))
    p99_ms = value / 1000.0 if p99.endswith("us") else (value if p99.endswith("ms") else value * 1000)
    return rps, p99_ms, "Non-2xx" in out


def main():
    args = argparse.ArgumentParser()
    for name in ("api", "token", "org", "space", "renderer", "out"):
        args.add_argument(f"--{name}", required=True)
    args.add_argument("--bench", action="store_true", help="also measure both renderers side by side")
    a = args.parse_args()
    api = Api(a.api, a.token)
    renderer = a.renderer.rstrip("/")
    at = lambda path="": f"{renderer}/url/{HOST}/{path}"  # noqa: E731

    # The imported space as the default section, a small second space as a section that only
    # visitors on the "pro" plan see.
    site = api.call("POST", f"/v1/orgs/{a.org}/sites", {"title": "Lantern"})
    base = f"/v1/orgs/{a.org}/sites/{site['id']}"
    api.call("POST", f"{base}/sections", {"title": "Docs", "spaceId": a.space})
    beta = api.call("POST", f"/v1/orgs/{a.org}/spaces", {"title": "Beta programme"})
    cr = api.call("POST", f"/v1/spaces/{beta['id']}/change-requests", {"subject": "Beta"})
    api.call("POST", f"/v1/spaces/{beta['id']}/change-requests/{cr['id']}/content", {"changes": [
        {"operation": "insert_page", "title": "Beta features",
         "document": {"markdown": "Early access to the incident timeline."}}]})
    api.call("POST", f"/v1/spaces/{beta['id']}/change-requests/{cr['id']}/merge", {})
    api.call("POST", f"{base}/sections", {"title": "Beta", "spaceId": beta["id"]})
    api.call("PATCH", base, {"hostname": HOST})
    api.call("POST", f"{base}/publish", {})

    # Side by side, on the same page: quire's own reader (its hostname as the Host) and
    # GitBook's renderer; cold first (the first request each server gets for that page).
    pages = flatten(api.call("GET", f"/v1/spaces/{a.space}/content/pages")["pages"], [])
    if not pages:
        raise SystemExit("the imported space has no page")
    quire_host = {"Host": HOST}
    paths = [p.get("path", "") for p in pages]
    bench_page = "reference/api" if "reference/api" in paths else paths[len(paths) // 2]
    figures = []
    if a.bench:
        figures.append(("time to first byte, cold (ms)",
                        ttfb(f"{a.api}/{bench_page}", quire_host) * 1000,
                        ttfb(at(bench_page)) * 1000))

    print(f"{len(pages)} pages to render through {renderer}", flush=True)

    # Every page: 200, its title, the text of its first paragraph.
    seen_links, images, timings, shown_text = set(), set(), [], {}
    for p in pages:
        path = p.get("path", "")
        started = time.monotonic()
        status, _, body = fetch(at(path))
        timings.append(time.monotonic() - started)
        doc = parse(body)
        if status != 200:
            fail(f"/{path}: status {status}")
            continue
        if p["title"] not in doc.title or p["title"] not in doc.body_text:
            fail(f"/{path}: title {p['title']!r} not in <title> {doc.title!r} or the page")
        markdown = api.call("GET", f"/v1/spaces/{a.space}/content/page/{p['id']}?format=markdown")
        phrase = words_of(markdown.get("markdown", ""))
        if phrase and not shows(doc, phrase):
            fail(f"/{path}: text {phrase!r} not on the page")
        shown_text[path] = phrase or p["title"]
        for href in doc.links:
            if href.startswith(f"/url/{HOST}/") or href == f"/url/{HOST}":
                seen_links.add(href.split("#")[0].split("?")[0])
        images.update(doc.images)
        print(f"ok /{path} ({p['title']}) {timings[-1] * 1000:.0f} ms", flush=True)

    # Internal links resolve (to a page, or a redirect to one).
    for href in sorted(seen_links):
        status, _, _ = fetch(renderer + href)
        if status != 200:
            fail(f"link {href}: status {status}")
    print(f"{len(seen_links)} internal links followed", flush=True)

    # Images load: quire's signed file URLs (possibly through the renderer's image proxy).
    content_images = [src for src in images if "/blobs/" in src or "image" in src]
    files = api.call("GET", f"/v1/spaces/{a.space}/content/files")["items"]
    if files and not content_images:
        fail(f"the space has {len(files)} files, and no page shows an image")
    for src in sorted(content_images):
        url = src if src.startswith("http") else renderer + src
        status, ctype, body = fetch(url)
        if status != 200 or not ctype.startswith("image/") or not body:
            fail(f"image {src}: status {status}, type {ctype!r}, {len(body)} bytes")
    print(f"{len(content_images)} images loaded", flush=True)

    # The `.md` form of a page, llms.txt and the sitemap.
    # The last page is the one the visitor-auth check and the `.md` form read.
    last = paths[-1]
    last_text = shown_text.get(last, pages[-1]["title"])
    for extra in (f"{last}.md", "llms.txt", "sitemap.xml"):
        status, _, body = fetch(at(extra))
        if status != 200 or not body:
            fail(f"/{extra}: status {status}")
        else:
            print(f"ok /{extra} ({len(body)} bytes)", flush=True)

    # Adaptive: the Beta section only for visitors whose claims say "pro".
    beta_section = [s for s in api.call("GET", f"{base}/sections")["items"] if s["title"] == "Beta"][0]
    api.call("PUT", f"{base}/adaptive-schema", {"jsonSchema": {"type": "object", "properties": {
        "unsigned": {"type": "object", "properties": {"plan": {"type": "string"}},
                     "additionalProperties": False}}, "additionalProperties": False}})
    api.call("PATCH", base, {"adaptiveContent": {"enabled": True}})
    api.call("PATCH", f"{base}/sections/{beta_section['id']}",
             {"condition": 'visitor.claims.unsigned.plan == "pro"'})
    beta_path = beta_section["path"]
    status, _, body = fetch_as_browser(at(f"{beta_path}/beta-features"))
    if status == 200 and shows(parse(body), "incident timeline"):
        fail("the Beta section is shown to a visitor without the pro plan")
    status, _, body = fetch_as_browser(at(f"{beta_path}/beta-features?visitor.plan=pro"))
    if status != 200 or not shows(parse(body), "incident timeline"):
        fail(f"the Beta section is not shown to a pro visitor (status {status})")
    else:
        print("ok adaptive: Beta hidden without the claim, shown with visitor.plan=pro", flush=True)

    # Visitor auth: nothing without a token, the page with one.
    api.call("PATCH", base, {"visibility": "visitor-auth"})
    key = api.call("GET", f"{base}/publishing/auth")["privateKey"]
    status, _, body = fetch_as_browser(at(last))
    if status == 200 and shows(parse(body), last_text):
        fail("a visitor-auth site shows a page without a token")
    token = visitor_token(key, site["id"], {})
    status, _, body = fetch_as_browser(at(f"{last}?jwt_token={token}"))
    if status != 200 or not shows(parse(body), last_text):
        fail(f"a visitor-auth site refuses a valid token (status {status})")
    else:
        print("ok visitor-auth: refused without a token, shown with one", flush=True)
    api.call("PATCH", base, {"visibility": "public"})

    middle = paths[len(paths) // 2]
    for name, path in (("home", ""), ("middle", middle), ("last", last)):
        screenshot(at(path), f"{a.out}/{name}.png")

    if a.bench:
        q_bytes, q_count = first_load_bytes(f"{a.api}/{bench_page}", a.api, quire_host)
        r_bytes, r_count = first_load_bytes(at(bench_page), renderer)
        figures.append((f"first-load bytes (quire {q_count} requests, renderer {r_count})", q_bytes, r_bytes))
        figures.append(("time to first byte, warm (ms)",
                        ttfb(f"{a.api}/{bench_page}", quire_host) * 1000,
                        ttfb(at(bench_page)) * 1000))
        q = wrk(f"{a.api}/{bench_page}", quire_host)
        r = wrk(at(bench_page))
        if q[2] or r[2]:
            fail("non-2xx answers under load")
        figures.append(("requests/s at 16 connections", q[0], r[0]))
        figures.append(("p99 at 16 connections (ms)", q[1], r[1]))
        lines = [f"| {name} | {qv:,.1f} | {rv:,.1f} |" for name, qv, rv in figures]
        table = "| /" + bench_page + " | quire's reader | GitBook's renderer |\n|---|---|---|\n" + "\n".join(lines)
        print(table, flush=True)
        with open(f"{a.out}/bench.md", "w") as f:
            f.write(table + "\n")

    timings.sort()
    print(f"page loads: {len(timings)}, median {timings[len(timings) // 2] * 1000:.0f} ms, "
          f"max {timings[-1] * 1000:.0f} ms (first render of each page)", flush=True)
    if failures:
        print(f"{len(failures)} failed:\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    main()
