#!/bin/sh
# tests/test_collab_resume.sh BUILD SRCDIR — collab restarts while detect
# goes on detecting (issues 15 and 16: no silent data loss).  One simulated
# node's real syncd, audiod, fft and detect (apps/profiles/frog.ini on the
# pulse trains of tests/data/audiod.ini) feed the real collab, whose shared
# detections a UDP listener here records:
#  1. collab shares the node's detections as they come (none late);
#  2. collab is stopped (SIGTERM) while detect detects on, then started
#     again: it resumes detect/events from its cursor (collab.cursor in its
#     state directory) and shares what detect heard meanwhile, from detect's
#     history, marked late (late=1, caught up);
#  3. the new ones after it are shared as they come again.
# Then every detection detect wrote (--jsonl) from the first one shared on
# was shared exactly once, in order, the ones of the outage late=1 and no
# others late, and collab's status counts them as replayed.  Exit 0 pass,
# 1 fail, 77 without python3 (make deps).
set -u
b=$1; src=$2
command -v /usr/bin/python3 >/dev/null || { echo "test_collab_resume: SKIP: python3 not found (make deps)" >&2; exit 77; }
. "$src/tests/sim_node.sh"
w=$CHORUS_RUN/collab-resume
mkdir -p "$w/state"
LIS=; FFT=; DET=; CO=
cleanup() {
    for p in $CO $DET $FFT $LIS; do kill "$p" 2>/dev/null; done
    sim_node_stop
    wait 2>/dev/null
}
trap cleanup EXIT INT TERM
fail() { st_msg="$*"; st_fail test_collab_resume collab.log det.log listener.log; }
shared() { _c=$(grep -c ' DET ' "$w/out" 2>/dev/null); echo "${_c:-0}"; }
dets() { _c=$(wc -l < "$w/det.jsonl" 2>/dev/null); echo "${_c:-0}"; }

cd "$w" || exit 1
ports=$(/usr/bin/python3 -c 'import socket
u=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1",0))
t=socket.socket(); t.bind(("127.0.0.1",0))
print(u.getsockname()[1], t.getsockname()[1])')
uport=${ports% *}; cport=${ports#* }
# The listener: every datagram on a line (they are text).  collab binds the
# share port itself (to hear the others), so the listener shares it
# (SO_REUSEPORT) and collab broadcasts on loopback, as by default.
/usr/bin/python3 -u -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(("", int(sys.argv[1])))
with open(sys.argv[2], "a") as f:
    while True:
        d = s.recv(65536)
        f.write(d.decode("ascii", "replace").replace("\n", " ") + "\n")
        f.flush()
' "$uport" "$w/out" > listener.log 2>&1 & LIS=$!
# Node 2 with an address: its clip service then listens on clip_port itself
# (a node without one takes clip_port + its id, a port nobody checked free).
printf '2 0 0 1 127.0.0.1\n3 -8 4 1\n4 10 0 1\n5 3 9 1\n' > nodes.txt
printf '[collab]\nnode = 2\nnodes = %s\nshare_address = 127.255.255.255\nshare_port = %s\nclip_port = %s\n' \
    "$w/nodes.txt" "$uport" "$cport" > collab.conf
start_collab() {
    STATE_DIRECTORY="$w/state" "$b/bin/collab" -c "$w/collab.conf" >> "$w/collab.log" 2>&1 & CO=$!
}
sim_node_start "$b" "$src" || fail "the simulated node did not start"
"$b/bin/fft" -c /dev/null > fft.log 2>&1 & FFT=$!
"$b/bin/detect" -c /dev/null -p "$src/apps/profiles/frog.ini" --jsonl "$w/det.jsonl" > det.log 2>&1 & DET=$!
start_collab

# --- 1: shared as they come -------------------------------------------------
wait_for 60 "3 shared detections" sh -c "[ \$(grep -c ' DET ' '$w/out') -ge 3 ]"
echo "test_collab_resume: 1: $(shared) detections shared live"

# --- 2: collab stops; detect detects on; collab resumes ----------------------
kill "$CO"; wait "$CO" || fail "collab did not exit 0 on SIGTERM"; CO=
[ -s "$w/state/collab.cursor" ] || fail "2: the stopped collab left no cursor in its state directory"
down_at=$(dets); shared_at=$(shared)
wait_for 60 "3 detections while collab is down" sh -c "[ \$(wc -l < '$w/det.jsonl') -ge $((down_at + 3)) ]"
up_at=$(dets)
start_collab
wait_for 20 "the new collab to resume from its cursor" grep -q "resuming after message" "$w/collab.log"
wait_for 60 "the detections of the outage shared" sh -c "[ \$(grep -c ' DET ' '$w/out') -ge $((shared_at + up_at - down_at)) ]"
echo "test_collab_resume: 2: collab restarted after $((up_at - down_at)) detections made while it was down"

# --- 3: live again ---------------------------------------------------------------
wait_for 60 "3 more shared detections" sh -c "[ \$(grep -c ' DET ' '$w/out') -ge $((shared_at + up_at - down_at + 3)) ]"
CHORUS_NODE=2 "$b/bin/chorus-cat" collab/status > status.txt 2>&1 || fail "collab/status: $(cat status.txt)"
kill "$DET"; wait "$DET"; DET=
sleep 1
kill "$CO"; wait "$CO" || fail "the new collab did not exit 0 on SIGTERM"; CO=
kill "$LIS"; LIS=

/usr/bin/python3 - "$w/out" "$w/det.jsonl" "$down_at" "$up_at" "$w/status.txt" <<'EOP' || fail "the shared detections are not what detect made (above)"
import json, re, sys
out, det, down_at, up_at, status = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
made = [json.loads(l)["seq"] for l in open(det)]
shared = []  # (seq, late) in the order shared
for line in open(out):
    if " DET " not in line:
        continue
    seq = int(re.search(r"(?<![a-z])seq=(\d+)", line).group(1))
    m = re.search(r" late=(\d+)", line)
    shared.append((seq, int(m.group(1)) if m else 0))
seqs = [s for s, _ in shared]
assert len(seqs) == len(set(seqs)), "a detection shared twice: %s" % seqs
first = made.index(seqs[0])
last = made.index(seqs[-1])
expect = made[first:last + 1]
assert seqs == expect, "shared %s, detect made %s" % (seqs, expect)
assert all(l in (0, 1) for _, l in shared), "late bits other than caught up: %s" % shared
late = {s for s, l in shared if l}
# Lines down_at..up_at of det.jsonl were written while no collab ran: each
# is replayed, late.  One made just before the first collab stopped reading,
# or just before the second subscribed, may be replayed too (margin 2).
down = set(made[down_at:up_at])
assert down <= late, "made while collab was down but not shared late: %s" % sorted(down - late)
near = set(made[max(down_at - 2, 0):up_at + 2])
assert late <= near, "shared late though made while collab ran: %s" % sorted(late - near)
st = open(status).read()
rep = int(re.search(r"^resume .* replayed=(\d+)", st, re.M).group(1))
assert rep == len(late), "status says %d replayed, %d shared late:\n%s" % (rep, len(late), st)
print("test_collab_resume: %d detections shared once each in order, %d of the outage late (caught up), %d replayed on the status"
      % (len(seqs), len(late), rep))
EOP
echo "test_collab_resume: pass"
