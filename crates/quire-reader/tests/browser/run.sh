#!/bin/sh
# Exports the fixture site, serves it on 127.0.0.1:8099 and runs check.mjs in headless
# Chromium: screenshots (1280x900 and 360x740, light and dark) land in
# target/reader-screenshots/. Needs chromium and Node 20+; not part of `cargo test`.
set -e
root=$(cd "$(dirname "$0")/../../../.." && pwd)
cd "$root"
cargo run -q -p quire-reader --example export_fixture
python3 -m http.server 8099 --bind 127.0.0.1 --directory target/reader-site >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 1
node --experimental-websocket crates/quire-reader/tests/browser/check.mjs http://127.0.0.1:8099 target/reader-screenshots
