#!/bin/sh
# bench/soak — the chaos soak (issue 15): chorus-sim --chaos on the default
# scenario for SOAK_SECONDS (default 1800) with syncd, audiod, fft and
# detect on every node, a fault every 10 s on average (kill -9 and restart
# a second later, SIGSTOP for 1-5 s, one time in five a process hogging
# the host's cores for 2-6 s, one in five a node's radio cut for 3-15 s).  Prints chorus-sim's error table
# and the chaos report (every process instance's memory and descriptors,
# judged for growth over 5 % when it lived 20 minutes or more) and writes
# soak-truth.csv and soak-chaos.csv under $CHORUS_BENCH_OUT.  Fails (exit
# 1) on any conversion beyond 5 stated standard errors, a crash, a failed
# restart, a process not running at the end, a client that did not
# reconnect by itself (sim/launch/chaos_clients.h), or growth.
B=${SOAK_BIN:-build/bin}
outdir=${CHORUS_BENCH_OUT:-bench-out}
mkdir -p "$outdir"
run=$(mktemp -d "${TMPDIR:-/tmp}/chorus-soak.XXXXXX")
"$B/chorus-sim" sim/scenarios/default.ini --bin "$B" --duration "${SOAK_SECONDS:-1800}" --out "$run" \
    --chaos "${SOAK_SEED:-1}" --chaos-interval 10 --chaos-hog --chaos-radio \
    --app fft --app "detect -p apps/profiles/frog.ini" >"$run/soak.log" 2>&1
rc=$?
grep -E '^(kind|cpu|global|audio0) |^chaos|^  node' "$run/soak.log"
cp "$run/truth.csv" "$outdir/soak-truth.csv" 2>/dev/null
cp "$run/chaos.csv" "$outdir/soak-chaos.csv" 2>/dev/null
if [ "$rc" != 0 ]; then
    grep -E 'beyond|failures|cannot' "$run/soak.log"
    echo "soak: FAIL (chorus-sim exit $rc; logs in $run)"
    exit 1
fi
rm -rf "$run"
echo "soak: ok (${SOAK_SECONDS:-1800} s); CSV: $outdir/soak-truth.csv, $outdir/soak-chaos.csv"
