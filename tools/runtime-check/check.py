#!/usr/bin/env python3
"""Integration scripts checked from outside, with GitBook's own CLI and integrations
(docs/integrations.md, "The runtime").

    python3 tools/runtime-check/check.py --quire target/debug/quire \\
        --cli PATH/node_modules/.bin/gitbook --mermaid PATH/mermaid [--database-url URL]

`--cli` is `@gitbook/cli` (`npm install @gitbook/cli --ignore-scripts`: its install script
downloads a tunnel binary). `--mermaid` is GitBook's Mermaid integration (`integrations/mermaid`
of the GitbookIO/integrations repository) with its dependencies installed (`npm install
--ignore-scripts @gitbook/runtime @gitbook/api @gitbook/tsconfig` after emptying its
workspace-only `devDependencies`). Neither is part of quire.

Starts `quire serve` on a fresh data directory (no `--outbound-allow`), then:

1. Mermaid, built and published by `gitbook publish` with only the endpoint and token changed,
   installed on a space: its block renders through `POST .../render` (a webframe on quire's
   public endpoint, `Cache-Control: max-age=86400`), and the webframe's page is served with the
   integration's security policy and the sandbox;
2. a probe integration written against `@gitbook/runtime` (made here, built and published by the
   same CLI, using Mermaid's node_modules): a merge reaches its `space_content_updated` handler,
   which calls quire's API back with its installation token; a component that loops is
   stopped at the CPU limit while quire answers others; its fetch of http://127.0.0.1/ is
   refused; it reads its secret, which no API answer carries.

Prints each check and exits 1 if one fails. Standard library only.
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

SECRET = "probe-secret-4711"

PROBE_MANIFEST = """name: probe
title: Probe
description: Checks quire's integration runtime.
visibility: private
organization: replaced-by-the-o-flag
script: ./src/index.ts
scopes:
  - space:content:read
  - space:metadata:read
blocks:
  - id: loop
    title: Loop
secrets:
  SECRET: "%s"
contentSecurityPolicy:
  script-src: "'self'"
""" % SECRET

PROBE_SOURCE = r"""
import { createIntegration, createComponent } from '@gitbook/runtime';

const loop = createComponent({
    componentId: 'loop',
    async render() {
        for (;;) {}
    },
});

export default createIntegration({
    components: [loop],
    events: {
        space_content_updated: async (event, context) => {
            console.log(`updated ${event.spaceId}`);
            const space = await context.api.spaces.getSpaceById(event.spaceId);
            console.log(`read back ${space.data.title}`);
        },
    },
    fetch: async (request, context) => {
        const url = new URL(request.url);
        if (url.pathname.endsWith('/secret')) {
            return new Response(context.environment.secrets.SECRET);
        }
        try {
            const r = await fetch(url.searchParams.get('to'));
            return new Response(`reached ${r.status}`);
        } catch (e) {
            return new Response(String(e.message), { status: 502 });
        }
    },
});
"""


class Quire:
    def __init__(self, binary, data_dir, database_url):
        self.binary, self.data_dir, self.database_url = binary, data_dir, database_url
        self.proc = None
        self.token = None
        self.api = None

    def start(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.api = f"http://127.0.0.1:{port}"
        argv = [self.binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", self.data_dir,
                "--public-url", self.api, "--rate-limit", "0", "--delivery-backoff", "1s"]
        if self.database_url:
            argv += ["--database-url", self.database_url]
        out = open(os.path.join(self.data_dir, "..", "quire.out"), "ab")
        err = open(os.path.join(self.data_dir, "..", "quire.err"), "ab")
        self.proc = subprocess.Popen(argv, stdout=out, stderr=err)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"quire exited with {self.proc.returncode}; see {err.name}")
            if self.token is None:
                with open(out.name, "rb") as f:
                    found = re.search(rb"quire_[A-Za-z0-9]+", f.read())
                    self.token = found.group(0).decode() if found else None
            try:
                urllib.request.urlopen(self.api + "/readyz", timeout=1)
                if self.token:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        sys.exit("quire did not start within 60 s")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()

    def call(self, method, path, body=None, expect=None, token=True):
        """(status, headers, parsed body or text)."""
        data = json.dumps(body).encode() if body is not None else None
        url = path if path.startswith("http") else self.api + path
        req = urllib.request.Request(url, data=data, method=method)
        if token:
            req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                status, headers, raw = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, headers, raw = e.code, e.headers, e.read()
        if expect is not None and status != expect:
            sys.exit(f"{method} {path}: expected {expect}, got {status}: {raw[:400]!r}")
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        return status, headers, parsed


checks = []


def check(name, ok, detail=""):
    checks.append(ok)
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)


def publish(cli, directory, q, org, env=None):
    """`gitbook publish` with only the endpoint and token changed."""
    run_env = dict(os.environ, GITBOOK_TOKEN=q.token, GITBOOK_ENDPOINT=q.api, **(env or {}))
    done = subprocess.run([cli, "publish", ".", "-o", org], cwd=directory, env=run_env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        sys.exit(f"gitbook publish failed in {directory}:\n{done.stdout}\n{done.stderr}")


def install(q, name, org, space):
    _, _, inst = q.call("POST", f"/v1/integrations/{name}/installations", {"organization": org}, expect=201)
    q.call("POST", f"/v1/integrations/{name}/installations/{inst['id']}/spaces", {"space": space}, expect=201)
    return inst["id"]


def change_main(q, space, title):
    _, _, cr = q.call("POST", f"/v1/spaces/{space}/change-requests", {"subject": title}, expect=201)
    q.call("POST", f"/v1/spaces/{space}/change-requests/{cr['id']}/content",
           {"changes": [{"operation": "insert_page", "title": title, "document": {"markdown": "Text.\n"}}]},
           expect=200)
    q.call("POST", f"/v1/spaces/{space}/change-requests/{cr['id']}/merge", {}, expect=200)


def render_body(component, space, props):
    return {"componentId": component, "props": props,
            "context": {"type": "document", "spaceId": space, "editable": False, "theme": "light"}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--mermaid", required=True)
    ap.add_argument("--database-url")
    args = ap.parse_args()
    cli = os.path.abspath(args.cli)

    work = tempfile.mkdtemp(prefix="quire-runtime-")
    data = os.path.join(work, "data")
    os.makedirs(data)
    if args.database_url:
        name = args.database_url.rsplit("/", 1)[1]
        admin = args.database_url.rsplit("/", 1)[0] + "/postgres"
        subprocess.run(["psql", admin, "-c", f"DROP DATABASE IF EXISTS {name}"], check=True, capture_output=True)
        subprocess.run(["psql", admin, "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    q = Quire(os.path.abspath(args.quire), data, args.database_url)
    q.start()
    try:
        _, _, orgs = q.call("GET", "/v1/orgs", expect=200)
        org = orgs["items"][0]["id"]
        _, _, space = q.call("POST", f"/v1/orgs/{org}/spaces", {"title": "Docs"}, expect=201)
        space = space["id"]

        # 1. Mermaid, as GitBook publishes it.
        mermaid = os.path.join(work, "mermaid")
        shutil.copytree(os.path.abspath(args.mermaid), mermaid, symlinks=True)
        started = time.time()
        publish(cli, mermaid, q, org)
        check("gitbook publish (Mermaid) to quire", True, f"{time.time() - started:.1f} s")
        install(q, "mermaid", org, space)
        status, headers, out = q.call("POST", "/v1/integrations/mermaid/render",
                                      render_body("diagram", space, {"content": "graph LR\n  A --> B"}))
        frame = (out or {}).get("element", {}).get("children", [{}])[0] if isinstance(out, dict) else {}
        _, _, integration = q.call("GET", "/v1/integrations/mermaid", expect=200)
        endpoint = integration["urls"]["publicEndpoint"]
        frame_url = frame.get("source", {}).get("url", "")
        check("Mermaid's block renders a webframe on quire's public endpoint",
              status == 200 and out.get("type") == "element" and frame.get("type") == "webframe"
              and frame_url.startswith(endpoint) and out.get("state", {}).get("content") == "graph LR\n  A --> B",
              f"{status} {json.dumps(out)[:300]}")
        check("the render asks to be cached", headers.get("Cache-Control") == "max-age=86400",
              str(headers.get("Cache-Control")))
        status, headers, page = q.call("GET", frame_url, token=False)
        policies = headers.get_all("Content-Security-Policy") or []
        check("Mermaid's webframe page is served with the CSP and the sandbox",
              status == 200 and "mermaid" in str(page).lower() and len(policies) >= 1
              and any(p.startswith("sandbox ") for p in policies),
              f"{status}, {headers.get('Content-Type')}, {len(str(page))} chars, policies {policies}")

        # 2. The probe, on @gitbook/runtime.
        probe = os.path.join(work, "probe")
        os.makedirs(os.path.join(probe, "src"))
        with open(os.path.join(probe, "gitbook-manifest.yaml"), "w") as f:
            f.write(PROBE_MANIFEST)
        with open(os.path.join(probe, "src", "index.ts"), "w") as f:
            f.write(PROBE_SOURCE)
        with open(os.path.join(probe, "package.json"), "w") as f:
            json.dump({"name": "probe", "private": True}, f)
        os.symlink(os.path.join(mermaid, "node_modules"), os.path.join(probe, "node_modules"))
        publish(cli, probe, q, org)
        install(q, "probe", org, space)

        change_main(q, space, "Guide")
        deadline = time.time() + 60
        updated = None
        while time.time() < deadline:
            _, _, page = q.call("GET", "/v1/integrations/probe/events", expect=200)
            found = [e for e in page["items"] if e["payload"]["type"] == "space_content_updated"]
            if found and found[0]["status"] != "pending":
                updated = found[0]
                break
            time.sleep(0.1)
        _, _, detail = q.call("GET", f"/v1/integrations/probe/events/{updated['id']}", expect=200) if updated else (0, 0, {})
        lines = [l["message"] for l in (detail or {}).get("trace", {}).get("logs", [])]
        check("a merge reaches the handler, which reads the space back with its installation token",
              bool(updated) and updated["status"] == "success" and f"console: updated {space}" in lines
              and "console: read back Docs" in lines, json.dumps(lines))

        result = {}

        def looping():
            result["started"] = time.time()
            result["answer"] = q.call("POST", "/v1/integrations/probe/render", render_body("loop", space, {}))
            result["took"] = time.time() - result["started"]

        t = threading.Thread(target=looping)
        t.start()
        served = 0
        while t.is_alive():
            q.call("GET", "/v1/user", expect=200)
            served += 1
        t.join()
        status, _, out = result["answer"]
        check("a component that loops is stopped at the CPU limit while others are served",
              status == 502 and "CPU limit" in json.dumps(out) and served > 0,
              f"{status} after {result['took']:.2f} s, {served} other requests answered meanwhile: {json.dumps(out)[:200]}")

        status, _, said = q.call("GET", f"{endpoint.replace('/mermaid/', '/probe/')}/go?to=http://127.0.0.1/", token=False)
        check("the script's fetch of http://127.0.0.1/ is refused by the outbound policy",
              status == 502 and "private or reserved address" in str(said), f"{status}: {str(said)[:200]}")

        status, _, said = q.call("GET", f"{endpoint.replace('/mermaid/', '/probe/')}/secret", token=False)
        _, _, listed = q.call("GET", "/v1/integrations/probe", expect=200)
        _, _, events = q.call("GET", "/v1/integrations/probe/events", expect=200)
        check("the script reads its secret; no API answer carries it",
              said == SECRET and SECRET not in json.dumps(listed) and SECRET not in json.dumps(events),
              f"{status}")
    finally:
        q.stop()
    print(f"{sum(checks)}/{len(checks)} checks passed")
    sys.exit(0 if all(checks) else 1)


if __name__ == "__main__":
    main()
