#!/usr/bin/env bash
# Decode speed per core count and thread count, alone and beside one busy core
# (docs/benchmarks.md, "Per core count"). Each row is one sampled 300-token reply from
# `hearth-cli chat`, confined with taskset to the first N cores; "busy" spins `yes` on the first
# of them, the worst case of another program (the window) taking part of a core. "auto" is the
# default: the engine measures every core against one fewer while it writes (threads.rs).
#
#   scripts/bench-threads.sh HEARTH_CLI MODEL [CORE_COUNTS...]
set -euo pipefail
cli=$1 model=$2
shift 2
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=("$(nproc)")

reply_tps() { # cores threads busy -> tok/s
    local cores=$1 threads=$2 busy=$3 spinner="" flags=() line
    [ "$threads" = auto ] || flags=(--threads "$threads")
    if [ "$busy" = busy ]; then
        taskset -c 0 yes >/dev/null &
        spinner=$!
    fi
    line=$(echo "Write a long story about a lighthouse keeper." |
        timeout "${CELL_TIMEOUT:-60}" taskset -c "0-$((cores - 1))" "$cli" chat --model "$model" --ignore-eos \
            --max-tokens "${TOKENS:-300}" --fresh "${flags[@]}" 2>&1 >/dev/null |
        grep -o '[0-9.]* tok/s' | tail -1 || true)
    [ -z "$spinner" ] || kill "$spinner"
    echo "${line:-timed out}" | sed 's/ tok\/s//'
}

echo "| cores | load | auto | every core | one fewer | half |"
echo "|---:|---|---:|---:|---:|---:|"
for cores in "${counts[@]}"; do
    half=$((cores / 2 > 0 ? cores / 2 : 1))
    for busy in quiet busy; do
        row="| $cores | $busy"
        for threads in auto "$cores" "$((cores - 1 > 0 ? cores - 1 : 1))" "$half"; do
            row+=" | $(reply_tps "$cores" "$threads" "$busy")"
        done
        echo "$row |"
    done
done
