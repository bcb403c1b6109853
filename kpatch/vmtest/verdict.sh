#!/bin/sh
# kpatch/vmtest/verdict.sh NAME LOG START QEMU_EXIT — the end of a kpatch VM
# test (kpatch/vmtest/run.sh, cross/vm-kpatch-arm64.sh): prints the lines of
# the console log LOG that init.sh meant for the host, and passes (exit 0)
# when the VM printed "KPATCH-VMTEST: PASS"; NAME starts the verdict line,
# START is the run's start (date +%s).
name=$1 log=$2 start=$3 qrc=$4
tr -d '\r' < "$log" | grep -E '^(vmcheck|vmtest|selftest|CHORUS-SELFTEST|dmesg|KPATCH-VMTEST)'
dur=$(($(date +%s) - start))
if grep -q '^KPATCH-VMTEST: PASS' "$log"; then
    echo "$name: PASS in ${dur}s"
    exit 0
fi
# The failed checks again, last, so a summary that keeps only the tail of
# the output (tests/run, CI) still says which check failed and why.
echo "$name: the failed checks:" >&2
tr -d '\r' < "$log" | grep -E '^vmtest: FAIL|^selftest: .*\| *FAIL *$|^vmcheck: FAIL|^CHORUS-SELFTEST: FAIL' >&2
echo "$name: FAIL in ${dur}s (qemu exit $qrc); see $log" >&2
exit 1
