#!/usr/bin/env python3
"""Event delivery checked from outside, against the real binary (docs/integrations.md).

    python3 tools/delivery-check/check.py --quire target/release/quire [--database-url URL]

Starts `quire serve` on a fresh data directory (and, with --database-url, a fresh PostgreSQL
database of that name, dropped and created again), and a local receiver that verifies every
delivery's signature and answers 500 to the first two attempts of each event. Then:

1. retries: every event of an installation is acknowledged at its third attempt, and its trace
   names the three attempts;
2. SIGKILL: quire is killed with SIGKILL while an event waits for its next attempt, started
   again, and the receiver acknowledges every event exactly once;
3. other organizations: an installation in another organization sends nothing to the dev
   tunnel until `all` is set;
4. installation tokens: a token reads the space its installation is enabled on, and not the
   others.

Prints each check and exits 1 if one fails. Standard library only.
"""

import argparse
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAILURES_PER_EVENT = 2
BACKOFF = "2s"


class Receiver:
    """Records every delivery; answers 500 to an event's first attempts, then 200."""

    def __init__(self):
        self.lock = threading.Lock()
        self.secret = b""
        self.posts = []  # (event id, attempt header, type, organization of the payload, verified, answered)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                event = json.loads(body)
                verified = receiver.verify(self.headers.get("X-GitBook-Signature", ""), body)
                with receiver.lock:
                    seen = sum(1 for p in receiver.posts if p["id"] == event["eventId"])
                    status = 500 if seen < FAILURES_PER_EVENT else 200
                    receiver.posts.append({
                        "id": event["eventId"],
                        "attempt": self.headers.get("X-Quire-Delivery-Attempt"),
                        "type": event.get("type"),
                        "installation": event.get("installationId"),
                        "verified": verified,
                        "answered": status,
                    })
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def verify(self, header, body):
        parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
        if "t" not in parts or "v1" not in parts or abs(int(parts["t"]) - time.time()) > 300:
            return False
        mac = hmac.new(self.secret, f"{parts['t']}.".encode() + body, hashlib.sha256)
        return hmac.compare_digest(mac.hexdigest(), parts["v1"])

    def snapshot(self):
        with self.lock:
            return list(self.posts)


class Quire:
    """One `quire serve` process on a data directory that outlives it."""

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
                "--outbound-allow", "127.0.0.1", "--delivery-backoff", BACKOFF, "--rate-limit", "0"]
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

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()

    def call(self, method, path, body=None, token=None, expect=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {token or self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, raw = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        if expect is not None and status != expect:
            sys.exit(f"{method} {path}: expected {expect}, got {status}: {raw[:400]!r}")
        return status, (json.loads(raw) if raw else None)


checks = []


def check(name, ok, detail=""):
    checks.append(ok)
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)


def wait(what, predicate, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    sys.exit(f"timed out after {seconds} s waiting for {what}")


def change_main(q, space, title):
    _, cr = q.call("POST", f"/v1/spaces/{space}/change-requests", {"subject": title}, expect=201)
    q.call("POST", f"/v1/spaces/{space}/change-requests/{cr['id']}/content",
           {"changes": [{"operation": "insert_page", "title": title, "document": {"markdown": "Text.\n"}}]},
           expect=200)
    q.call("POST", f"/v1/spaces/{space}/change-requests/{cr['id']}/merge", {}, expect=200)


def events(q, name):
    _, page = q.call("GET", f"/v1/integrations/{name}/events?limit=100", expect=200)
    return page["items"]


def install(q, name, org, space):
    _, inst = q.call("POST", f"/v1/integrations/{name}/installations", {"organization": org}, expect=201)
    q.call("POST", f"/v1/integrations/{name}/installations/{inst['id']}/spaces", {"space": space}, expect=201)
    return inst["id"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--database-url")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="quire-delivery-")
    data = os.path.join(work, "data")
    os.makedirs(data)
    if args.database_url:
        name = args.database_url.rsplit("/", 1)[1]
        admin = args.database_url.rsplit("/", 1)[0] + "/postgres"
        subprocess.run(["psql", admin, "-q", "-c", f'DROP DATABASE IF EXISTS "{name}"',
                        "-c", f'CREATE DATABASE "{name}"'], check=True)
    receiver = Receiver()
    q = Quire(os.path.abspath(args.quire), data, args.database_url)
    q.start()
    try:
        run(q, receiver)
    finally:
        q.stop()
    print(f"{sum(checks)}/{len(checks)} checks passed (logs in {work})")
    if all(checks):
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if all(checks) else 1)


def run(q, receiver):
    _, orgs = q.call("GET", "/v1/orgs", expect=200)
    owner = orgs["items"][0]["id"]
    _, published = q.call("POST", "/v1/integrations/notifier", {
        "organization": owner, "title": "Notifier", "description": "Says what changed.",
        "script": "export default {}", "scopes": ["space:content:read", "space:metadata:read"],
        "visibility": "public",
    }, expect=200)
    receiver.secret = published["signingSecret"].encode()
    q.call("PUT", "/v1/integrations/notifier/dev", {"tunnelUrl": receiver.url}, expect=204)
    _, docs = q.call("POST", f"/v1/orgs/{owner}/spaces", {"title": "Docs"}, expect=201)
    _, other = q.call("POST", f"/v1/orgs/{owner}/spaces", {"title": "Not enabled"}, expect=201)
    installation = install(q, "notifier", owner, docs["id"])
    change_main(q, docs["id"], "First")

    # 1. Every event fails twice, succeeds at the third attempt, each attempt in its trace.
    settled = wait("the first events to be delivered", lambda: (
        (lambda e: e if e and all(x["status"] != "pending" for x in e)
         and any(x["payload"]["type"] == "space_content_updated" for x in e) else None)(events(q, "notifier"))))
    posts = receiver.snapshot()
    for event in settled:
        mine = [p for p in posts if p["id"] == event["id"]]
        _, detail = q.call("GET", f"/v1/integrations/notifier/events/{event['id']}", expect=200)
        attempts = [l["message"] for l in detail["trace"]["logs"] if l["message"].startswith("attempt ") and " answered " in l["message"]]
        check(f"{event['payload']['type']}: success at the third attempt, signed, three attempts in the trace",
              event["status"] == "success" and [p["answered"] for p in mine] == [500, 500, 200]
              and all(p["verified"] for p in mine) and [p["attempt"] for p in mine] == ["1", "2", "3"]
              and len(attempts) == 3,
              f"status {event['status']}, answers {[p['answered'] for p in mine]}, trace {attempts}")

    # 2. Killed with SIGKILL while an event waits for its second attempt; started again.
    before = {p["id"] for p in receiver.snapshot()}
    change_main(q, docs["id"], "Second")
    first = wait("the first attempt of the new event", lambda: next(
        (p for p in receiver.snapshot() if p["id"] not in before and p["type"] == "space_content_updated"), None))
    q.kill()
    attempts_while_dead = len(receiver.snapshot())
    q.start()
    wait("the new event to be delivered", lambda: all(
        e["status"] != "pending" for e in events(q, "notifier")), seconds=90)
    posts = receiver.snapshot()
    acks = {}
    for p in posts:
        if p["answered"] == 200:
            acks[p["id"]] = acks.get(p["id"], 0) + 1
    all_events = events(q, "notifier")
    check("after SIGKILL between attempts, the event is delivered once",
          next(e for e in all_events if e["id"] == first["id"])["status"] == "success" and acks.get(first["id"]) == 1,
          f"{sum(1 for p in posts if p['id'] == first['id'])} attempts, {acks.get(first['id'], 0)} acknowledged; "
          f"{attempts_while_dead} posts before the restart")
    check("every event acknowledged exactly once",
          all(acks.get(e["id"]) == 1 for e in all_events) and all(v == 1 for v in acks.values()),
          f"{len(all_events)} events, acknowledgements {sorted(acks.values())}")

    # 3. Another organization's events reach the tunnel only with `all`.
    _, theirs = q.call("POST", "/v1/orgs", {"title": "Customer"}, expect=201)
    _, their_space = q.call("POST", f"/v1/orgs/{theirs['id']}/spaces", {"title": "Theirs"}, expect=201)
    their_installation = install(q, "notifier", theirs["id"], their_space["id"])
    change_main(q, their_space["id"], "Theirs")
    theirs_settled = wait("the other organization's events to settle", lambda: (
        (lambda e: e if e and all(x["status"] != "pending" for x in e) else None)(
            [x for x in events(q, "notifier") if x.get("installationId") == their_installation])))
    got = [p for p in receiver.snapshot() if p["installation"] == their_installation]
    check("without `all`, another organization's events are not sent to the tunnel",
          not got and all(e["status"] == "failed" for e in theirs_settled),
          f"{len(theirs_settled)} events, {len(got)} received")
    q.call("PUT", "/v1/integrations/notifier/dev", {"tunnelUrl": receiver.url, "all": True}, expect=204)
    change_main(q, their_space["id"], "Theirs again")
    wait("the other organization's event with `all`", lambda: any(
        p["installation"] == their_installation and p["answered"] == 200 for p in receiver.snapshot()))
    check("with `all`, it is", True)

    # 4. An installation token reads its installation's spaces only.
    _, minted = q.call("POST", f"/v1/integrations/notifier/installations/{installation}/tokens", {}, expect=200)
    token = minted["token"]
    answers = {
        "enabled": q.call("GET", f"/v1/spaces/{docs['id']}", token=token)[0],
        "not enabled": q.call("GET", f"/v1/spaces/{other['id']}", token=token)[0],
        "another organization's": q.call("GET", f"/v1/spaces/{their_space['id']}", token=token)[0],
        "a write": q.call("POST", f"/v1/spaces/{docs['id']}/change-requests", {"subject": "x"}, token=token)[0],
    }
    check("an installation token reads its installation's space only",
          answers == {"enabled": 200, "not enabled": 404, "another organization's": 404, "a write": 403},
          json.dumps(answers))


if __name__ == "__main__":
    main()
