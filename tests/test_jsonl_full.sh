#!/bin/sh
# tests/test_jsonl_full.sh BUILD SRCDIR — no silent data loss on a full
# disk (issue 15): detect appends its durable record (the JSON-lines
# file) onto a tmpfs of 64 KiB filled up, over one simulated node's real
# syncd, audiod and fft.  While the disk is full every event it could not
# write is counted on its status device (`jsonl ... failed=N`, `error ...
# No space left on device`), the file holds no torn line, and when space
# comes back the next ones are written whole, the count unchanged; at
# SIGTERM it exits non-zero, saying how many it lost.  (collab writes its
# results through the same libdev/appendlog.h, whose own test fills a disk
# under each line; a lone node's collab makes no result to write.)  Runs in a mount
# namespace of its own (unshare -m, as root): exit 77 (skipped) where that
# or the tmpfs is refused, or without python3 (make deps); 0 pass, 1 fail.
set -u
b=$1; src=$2
command -v /usr/bin/python3 >/dev/null || { echo "test_jsonl_full: SKIP: python3 not found (make deps)" >&2; exit 77; }
if [ -z "${JF_IN_NS:-}" ]; then
    command -v unshare >/dev/null || { echo "test_jsonl_full: SKIP: no unshare (util-linux)" >&2; exit 77; }
    JF_IN_NS=1 exec unshare -m --propagation private sh "$0" "$@" ||
        { echo "test_jsonl_full: SKIP: unshare -m refused (not root?)" >&2; exit 77; }
fi
. "$src/tests/sim_node.sh"
w=$CHORUS_RUN/jsonl-full
mkdir -p "$w/full"
mount -t tmpfs -o size=64k tmpfs "$w/full" 2>/dev/null ||
    { echo "test_jsonl_full: SKIP: cannot mount a tmpfs here" >&2; exit 77; }
FFT=; DET=
cleanup() {
    for p in $DET $FFT; do kill "$p" 2>/dev/null; done
    sim_node_stop
    wait 2>/dev/null
    umount "$w/full" 2>/dev/null
}
trap cleanup EXIT INT TERM
fail() { st_msg="$*"; st_fail test_jsonl_full det.log det-status.txt; }
cd "$w" || exit 1
# Fill the disk: what dd could not write is the disk's end.
dd if=/dev/zero of="$w/full/fill" bs=1k count=1024 2>/dev/null
[ "$(df -k "$w/full" | awk 'NR==2 {print $4}')" = 0 ] || fail "the tmpfs is not full: $(df -k "$w/full" | tail -1)"
sim_node_start "$b" "$src" || fail "the simulated node did not start"
"$b/bin/fft" -c /dev/null > fft.log 2>&1 & FFT=$!
"$b/bin/detect" -c /dev/null -p "$src/apps/profiles/frog.ini" --jsonl "$w/full/det.jsonl" > det.log 2>&1 & DET=$!
st() { CHORUS_NODE=2 "$b/bin/chorus-cat" "$1" > "$2" 2>&1; }
failed_dets() { st detect/status det-status.txt; sed -n 's/^jsonl .* failed=\([0-9]*\).*/\1/p' det-status.txt; }

# --- 1: the disk full -----------------------------------------------------------
wait_for 90 "detect to count 3 events it could not write" sh -c "[ \"\$(CHORUS_NODE=2 '$b/bin/chorus-cat' detect/status | sed -n 's/^jsonl .* failed=\([0-9]*\).*/\1/p')\" -ge 3 ]"
st detect/status det-status.txt
grep -q '^error .*No space left on device' det-status.txt || fail "detect/status says no error"
[ ! -s "$w/full/det.jsonl" ] || fail "detect's file holds $(wc -c < "$w/full/det.jsonl") bytes of a full disk (a torn line?)"
lost=$(failed_dets)
echo "test_jsonl_full: 1: on the full disk detect counted $lost events not written: $(sed -n 's/^error //p' det-status.txt)"

# --- 2: space again ---------------------------------------------------------------
rm -f "$w/full/fill"
wait_for 90 "3 events written after the disk had space" sh -c "[ \$(wc -l < '$w/full/det.jsonl') -ge 3 ]"
/usr/bin/python3 - "$w/full/det.jsonl" <<'EOP' || fail "a line of the file is not whole JSON (above)"
import json, sys
for f in sys.argv[1:]:
    for i, l in enumerate(open(f), 1):
        json.loads(l)
EOP
after=$(failed_dets)
[ "$after" = "$lost" ] || fail "detect counted $after lost events after the disk had space (was $lost)"

# --- 3: the exit statuses ----------------------------------------------------------
kill "$DET"; wait "$DET"; drc=$?; DET=
[ "$drc" != 0 ] || fail "detect exited 0 after losing $lost events"
grep -q "$lost events were not written" det.log || fail "detect did not say at exit that it lost $lost events"
echo "test_jsonl_full: 2-3: $(wc -l < "$w/full/det.jsonl") events written whole once there was space, the count still $lost; detect exit $drc"
echo "test_jsonl_full: pass"
