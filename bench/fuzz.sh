#!/bin/sh
# bench/fuzz — every libFuzzer target (tests/fuzz/module.mk) for a while,
# from its committed seed corpus: executions, executions per second, edge
# coverage and features at the end, corpus size, and crashes (issue 15:
# "aim >= 10 million executions per network-facing target with no crash,
# leak or hang").  Prints a table and writes $CHORUS_BENCH_OUT/fuzz.csv.
# A crash, leak or hang (libFuzzer's non-zero exit) fails the benchmark and
# keeps the input; fewer executions than the aim are reported, not failed
# (the count follows the machine and its load).
#
# Usage: fuzz.sh FUZZ_DIR SRC_DIR   (FUZZ_BENCH_SECONDS per target, default 60;
#        FUZZ_BENCH_TARGETS="rbs share" runs a subset)
fdir=$1 src=$2
secs=${FUZZ_BENCH_SECONDS:-60}
out=${CHORUS_BENCH_OUT:-bench-out}
mkdir -p "$out"
csv="$out/fuzz.csv"
targets=${FUZZ_BENCH_TARGETS:-"wire frame rbs share clip ticker request kpatch config scenario"}
# Decoders of what arrives over a network (the aim applies to these).
network=" wire frame rbs share clip ticker request "
echo "target,network,seconds,executions,exec_per_s,cov,ft,corpus,crashed" > "$csv"
printf '%-9s %-4s %5s %12s %9s %6s %7s %7s  %s\n' target net s executions exec/s cov ft corpus verdict
fail=0
for t in $targets; do
    f="$fdir/fuzz_$t"
    if [ ! -x "$f" ]; then
        echo "bench/fuzz: $f not built (make needs clang with libFuzzer: make deps)" >&2
        exit 1
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/chorus-fuzzbench.XXXXXX")
    mkdir -p "$work/corpus" "$work/crash"
    cp "$src/tests/fuzz/corpus_$t"/* "$work/corpus/" 2>/dev/null
    crashed=0
    "$f" -max_total_time="$secs" -rss_limit_mb=1024 -max_len=140000 -print_final_stats=1 \
        -artifact_prefix="$work/crash/" "$work/corpus" > "$work/log" 2>&1 || crashed=1
    runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1/p' "$work/log" | tail -1)
    took=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\2/p' "$work/log" | tail -1)
    [ -n "$runs" ] || runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$work/log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$work/log" | tail -1)
    cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    corp=$(ls "$work/corpus" | wc -l)
    runs=${runs:-0} took=${took:-$secs}
    [ "$took" -gt 0 ] 2>/dev/null || took=$secs
    eps=$((runs / took))
    case "$network" in *" $t "*) net=yes ;; *) net=no ;; esac
    verdict=ok
    if [ $crashed = 1 ]; then
        verdict="CRASH (log and inputs kept in $work)"
        fail=1
    elif [ $net = yes ] && [ "$runs" -lt 10000000 ]; then
        verdict="below the 10 M aim"
    fi
    printf '%-9s %-4s %5s %12s %9s %6s %7s %7s  %s\n' "$t" "$net" "$took" "$runs" "$eps" "${cov:-?}" "${ft:-?}" "$corp" "$verdict"
    echo "$t,$net,$took,$runs,$eps,${cov:-},${ft:-},$corp,$crashed" >> "$csv"
    [ $crashed = 1 ] || rm -rf "$work"
done
echo "bench/fuzz: CSV $csv"
exit $fail
