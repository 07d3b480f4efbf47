#!/usr/bin/env bash
# GitBook's own published-docs renderer in front of quire: builds it (build.sh, cached), starts
# quire on a fresh database, imports a GitBook docs folder (default: ./docs beside this script),
# starts the renderer pointed at quire, and checks the site through it (check.py): every page
# with its title and text, internal links, images, `.md`, llms.txt, sitemap, an adaptive section,
# a visitor-auth site, three screenshots.
#   compat/gitbook-renderer/run.sh TARBALL [DOCS_DIR]
# TARBALL is the renderer's source (GitbookIO/gitbook, `../shared/vendor/gitbook-renderer/`).
# QUIRE_DATABASE_URL=postgres://... runs quire on PostgreSQL instead of SQLite (the database
# named there is dropped and created again). GITBOOK_RENDERER_BENCH=1 also measures quire's
# reader and the renderer side by side on one page (needs wrk). Output, logs and screenshots: target/gitbook-renderer/run.
# The renderer bakes quire's address in at build time, so quire listens on a fixed port here,
# 127.0.0.1:${QUIRE_COMPAT_PORT:-7411}, and the renderer on the next one.
set -euo pipefail
cd "$(dirname "$0")/../.."

tarball=${1:?usage: compat/gitbook-renderer/run.sh TARBALL [DOCS_DIR]}
docs=$(realpath "${2:-compat/gitbook-renderer/docs}")
port=${QUIRE_COMPAT_PORT:-7411}
renderer_port=$((port + 1))
api="http://127.0.0.1:$port"
out=target/gitbook-renderer/run
rm -rf "$out"
mkdir -p "$out"
out=$(realpath "$out")

# `localhost`: under `next start` the renderer sees its own requests' host as localhost.
renderer="http://localhost:$renderer_port"
app_dir=$(bash compat/gitbook-renderer/build.sh "$tarball" "$api" "$renderer")
export PATH="$(realpath target/gitbook-renderer/tools/node_modules/.bin):$PATH"
command -v chromium >/dev/null || { echo "chromium is needed for the screenshots (apt-get install chromium)" >&2; exit 1; }

cargo build --release --locked -p quire >&2
quire=$(realpath target/release/quire)

db_args=()
if [ -n "${QUIRE_DATABASE_URL:-}" ]; then
    name=${QUIRE_DATABASE_URL##*/}
    psql "${QUIRE_DATABASE_URL%/*}/postgres" -q -c "DROP DATABASE IF EXISTS \"$name\"" -c "CREATE DATABASE \"$name\""
    db_args=(--database-url "$QUIRE_DATABASE_URL")
fi
unset QUIRE_DATABASE_URL

pids=()
# Each server runs in its own process group (setsid), so that the renderer's node, started by
# bunx, stops with it.
cleanup() {
    for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

setsid "$quire" serve --listen "127.0.0.1:$port" --data-dir "$out/data" "${db_args[@]}" --rate-limit 0 \
    >"$out/quire.out" 2>"$out/quire.err" &
pids+=($!)
token=""
for _ in $(seq 600); do
    token=$(grep -o 'quire_[A-Za-z0-9]*' "$out/quire.out" | head -n 1 || true)
    if [ -n "$token" ] && curl -fsS -o /dev/null "$api/readyz" 2>/dev/null; then break; fi
    sleep 0.1
done
[ -n "$token" ] || { echo "quire printed no token; see $out/quire.*" >&2; exit 1; }

field() { python3 -c 'import json, sys; d = json.load(sys.stdin); print(d[sys.argv[1]] if sys.argv[1] != "org" else d["items"][0]["id"])' "$1"; }
H="Authorization: Bearer $token"
org=$(curl -fsS -H "$H" "$api/v1/orgs" | field org)
space=$(curl -fsS -H "$H" -H 'Content-Type: application/json' -d '{"title":"Lantern"}' "$api/v1/orgs/$org/spaces" | field id)
"$quire" admin import --data-dir "$out/data" "${db_args[@]}" --space "$space" "$docs" >&2

(cd "$app_dir" && PORT=$renderer_port GITBOOK_DISABLE_TRACKING=1 NEXT_TELEMETRY_DISABLED=1 \
    exec setsid bunx next start -p "$renderer_port" -H 127.0.0.1 >"$out/renderer.out" 2>"$out/renderer.err") &
pids+=($!)
for _ in $(seq 600); do
    kill -0 "${pids[-1]}" 2>/dev/null || { echo "the renderer exited; see $out/renderer.err" >&2; exit 1; }
    curl -s -o /dev/null "$renderer/" 2>/dev/null && break
    sleep 0.1
done

python3 compat/gitbook-renderer/check.py --api "$api" --token "$token" --org "$org" --space "$space" \
    --renderer "$renderer" --out "$out" ${GITBOOK_RENDERER_BENCH:+--bench}
echo "screenshots and logs in $out"
