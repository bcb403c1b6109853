#!/bin/sh
# Run a fuzzer for a bounded time over a scratch copy of the seed
# corpus (so new inputs never land in the source tree) and print a summary.
# Usage: run.sh FUZZER CORPUS_DIR [SECONDS]
fuzzer=$1 corpus=$2 secs=${3:-${FUZZ_SECONDS:-10}}
name=$(basename "$fuzzer")
work=$(mktemp -d "${CHORUS_RUN:-/tmp}/fuzz.XXXXXX")
mkdir -p "$work/corpus" "$work/crash"
cp "$corpus"/* "$work/corpus/" 2>/dev/null
echo "Running suite(s): $name ($secs s of libFuzzer over $(ls "$work/corpus" | wc -l) seeds)"
if "$fuzzer" -max_total_time="$secs" -rss_limit_mb=1024 -max_len=140000 \
        -artifact_prefix="$work/crash/" "$work/corpus" >"$work/log" 2>&1; then
    runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$work/log")
    echo "100%: $name: ${runs:-?} runs, no crash, $(ls "$work/corpus" | wc -l) corpus entries"
    rm -rf "$work"
    exit 0
fi
echo "0%: $name FAILED; last lines of the log:"
tail -n 30 "$work/log"
echo "crashing inputs kept in $work/crash:"; ls -l "$work/crash"
# keep the crash outside the per-test run directory, which is removed
keep=$(mktemp -d /tmp/chorus-fuzz-crash.XXXXXX) && cp -r "$work/crash" "$keep/" && echo "copied to $keep"
exit 1
