#!/usr/bin/env bash
# Runs the cargo-fuzz targets of quire-content, quire-adaptive and quire-openapi (fuzz_targets/):
#   bash fuzz/run.sh [SECONDS]     explores for SECONDS per target (default 60), from a new seed
#                                  each time: for sessions
#   bash fuzz/run.sh --runs N      replays the saved corpus, then N inputs from the fixed seed 1:
#                                  the same work every time, what CI runs
# Exits non-zero when a target crashed: a panic, a stack overflow, an input slower than 10 s,
# or over 2 GB of memory; the input is then in fuzz/artifacts/<target>/, and
# `cargo fuzz run <target> <file>` replays it.
#
# Works on the stable toolchain (RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its -Z flags) as on
# nightly. No sanitizer (-s none): both crates forbid unsafe code, so what is looked for is
# panics, stack overflows, time and memory, and AddressSanitizer would only slow the runs.
# Targets run with a 2 MiB stack, the size of the server's worker threads.
#
# The seeds are in fuzz/corpus/<target>/seed-*; what the fuzzers find is added beside them
# (ignored by git) and reused by the next run. CARGO_TARGET_DIR is honoured.
set -euo pipefail

if [ "${1:-}" = "--runs" ]; then
    bound=(-seed=1 "-runs=${2:?--runs takes a number of inputs}")
    what="the corpus and ${2} inputs from seed 1"
else
    bound=("-max_total_time=${1:-60}")
    what="${1:-60}s"
fi
cd "$(dirname "$0")"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

export RUSTC_BOOTSTRAP=1
targets=(markdown_to_document document_to_markdown merge3 adaptive_condition openapi_reference translate_segments
    conversation_questions)
# The dictionary of each target: markdown syntax, the fields and types of JSON documents, the
# tokens of the condition language, or the words and marks of chat messages.
declare -A dictionaries=(
    [markdown_to_document]=dict/markdown.dict
    [document_to_markdown]=dict/json.dict
    [merge3]=dict/markdown.dict
    [adaptive_condition]=dict/condition.dict
    [openapi_reference]=dict/openapi.dict
    [translate_segments]=dict/markdown.dict
    [conversation_questions]=dict/chat.dict
)

echo "== building the fuzz targets"
cargo fuzz build -s none

failed=()
for target in "${targets[@]}"; do
    echo "== fuzzing $target: $what"
    mkdir -p "corpus/$target"
    if ! (
        ulimit -s 2048
        # libFuzzer's progress lines (`#1234 NEW ...`, tens of thousands a minute) are left
        # out; a crash's report and the final stats are kept.
        cargo fuzz run -s none "$target" "corpus/$target" -- \
            "${bound[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
            -dict="${dictionaries[$target]}" -print_final_stats=1 2>&1 |
            { grep -v '^#[0-9]' || true; }
    ); then
        failed+=("$target")
    fi
done

if ((${#failed[@]} > 0)); then
    echo "== crashed: ${failed[*]} (inputs in fuzz/artifacts/)"
    exit 1
fi
echo "== fuzzing ok"
