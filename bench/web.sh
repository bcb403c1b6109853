#!/bin/sh
# bench/web — chorus-web's aim (issue 19): the page opens in under a
# second, updates within 1 s of a result, and chorus-web plus the proxies
# use under 2 % of a core per node at 16 kHz with a browser open.  A six-node
# chorus-sim --web field (tests/web_field.sh) at 16 kHz, then
# bench/web_measure.py for WEB_BENCH_SECONDS (default 60) with headless
# Chromium and an SSE client connected.  Prints the table and writes
# web.csv under $CHORUS_BENCH_OUT.  Fails only when it cannot measure (no
# chromium, no call located); missing an aim is reported, as bench/proxy
# does, not a failure.
b=${WEB_BENCH_BIN:-build}; src=${WEB_BENCH_SRC:-.}
outdir=${CHORUS_BENCH_OUT:-bench-out}
secs=${WEB_BENCH_SECONDS:-60}
mkdir -p "$outdir"
run=$(mktemp -d "${TMPDIR:-/tmp}/chorus-web-bench.XXXXXX")
. "$src/tests/web_field.sh"
trap 'web_field_stop; rm -rf "$run"' EXIT INT TERM
web_field_start "$b" "$src" "$run" $((secs + 200)) || exit 1
web_field_wait_calls 1 150 || { echo "bench web: collab located no call in 150 s"; tail -5 "$run/sim.log"; exit 1; }
/usr/bin/python3 "$src/bench/web_measure.py" "$WEB_BASE" "$WEB_URL" "$WEB_TOKEN" "$run" "$WEB_NODES" "$src" \
    "$outdir/web.csv" "$secs"
