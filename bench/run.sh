#!/usr/bin/env bash
# The one command: builds the release binaries, then runs the whole benchmark (SQLite, and
# PostgreSQL too when QUIRE_DATABASE_URL is set) and writes bench/REPORT.md.
#   bench/run.sh                       # full scale, 20 s phases
#   bench/run.sh --scale small --duration 3s --latency-duration 1s   # smoke run
#   bench/run.sh --mix sites --duration 5s --latency-duration 0      # docs sites and reader pages only
#   bench/run.sh --scale small --mix openapi --duration 3s --latency-duration 0   # OpenAPI only
#   bench/run.sh --scale small --mix pdf --duration 3s --latency-duration 0       # PDF exports only
# Extra arguments go to `quire-bench run` (see `quire-bench run --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p quire -p quire-bench
# GitBook's OpenAPI description, for the `openapi` phase (needs npm the first time). Without
# it the phase reports the description as missing.
bash .ci/gitbook-api || echo "bench/run.sh: .ci/gitbook-api failed: the openapi phase will report the description missing" >&2
target="${CARGO_TARGET_DIR:-target}"
# Copies, so that another build into the same target directory cannot swap the binaries
# while the run uses them.
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
cp "$target/release/quire" "$target/release/quire-bench" "$bin/"
"$bin/quire-bench" run --quire-bin "$bin/quire" "$@"
