#!/usr/bin/env bash
# `make bench-check`: `hearth-cli bench` (release build, beside the release llama-server) with its
# ratios compared against the figures recorded in docs/benchmarks.json. Exits non-zero when a
# section failed or a figure moved the wrong way by more than its noise. The report (JSON, with
# the comparison under "check") is kept in target/bench/bench.json; the table goes to stderr.
#   make bench-check                              every section (~15 min on 2 cores)
#   SECTIONS=switch,switch-server,typing make bench-check
#   RECORD=1 make bench-check                     also records the run's figures as accepted
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-model.sh target/test-data >/dev/null
scripts/build-llama-server.sh >/dev/null
cargo build --release -p hearth-cli
mkdir -p target/bench
args=(bench --model target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf --threads "${THREADS:-2}" --json
      --compare docs/benchmarks.json)
if [ -n "${SECTIONS:-}" ]; then args+=(--sections "$SECTIONS"); fi
if [ -n "${RECORD:-}" ]; then args+=(--record docs/benchmarks.json); fi
status=0
target/release/hearth-cli "${args[@]}" >target/bench/bench.json || status=$?
echo "the report: target/bench/bench.json" >&2
exit "$status"
