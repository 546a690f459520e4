#!/usr/bin/env bash
# Redraws the tour's screenshots (docs/tour.md) with the current viewer in headless Chromium:
# each picture is `flinksim view` of a shipped scenario's trace, at a fixed step and zoom.
# Usage: bash docs/images/regenerate.sh   (needs chromium; builds flinksim in release unless
# FLINKSIM_BIN names a binary to use)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin=${FLINKSIM_BIN:-}
if [ -z "$bin" ]; then
    cargo build --release --quiet
    bin=target/release/flinksim
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shot NAME SCENARIO URL-FRAGMENT [COMPARE-SCENARIO]
shot() {
    local name=$1 scenario=$2 fragment=$3 other=${4:-} size=1400,900
    "$bin" run "scenarios/$scenario.json" --quiet --trace "$work/$name.jsonl" >/dev/null || true
    if [ -n "$other" ]; then
        "$bin" run "scenarios/$other.json" --quiet --trace "$work/$name.b.jsonl" >/dev/null || true
        "$bin" view "$work/$name.jsonl" --compare "$work/$name.b.jsonl" -o "$work/$name.html" 2>/dev/null
        size=1400,1000
    else
        "$bin" view "$work/$name.jsonl" -o "$work/$name.html" 2>/dev/null
    fi
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$work/profile" --virtual-time-budget=3000 \
        --window-size=$size --screenshot="docs/images/$name.png" \
        "file://$work/$name.html#$fragment" 2>/dev/null
    echo "docs/images/$name.png"
}

shot cascade-option1 cascade-option1 "step=355&zoom=60&records=0"
shot case-barriers-and-eop case-barriers-and-eop "step=469&zoom=40&records=0"
shot failover-between-finishes failover-between-finishes "step=1240&zoom=60&records=0"
shot final-transaction-flink final-transaction-flink "step=1860&zoom=80&records=0"
shot final-transaction-legacy final-transaction-legacy "step=954&zoom=60&records=0"
shot flush-before-finish-true flush-before-finish-true "step=1785&zoom=30&records=0"
shot flush-before-finish-false flush-before-finish-false "step=2000&zoom=40&records=0"
shot batch-crash-mid-stage batch-crash-mid-stage "step=135&zoom=1000&records=0"
shot compare-final-transaction final-transaction-flink "step=676&zoom=150&records=0" final-transaction-legacy
