#!/bin/sh
# tests/test_fft_stall.sh BUILD SRCDIR — fft stalled (SIGSTOP) catches up
# without keeping the backlog's size (issue 15: the chaos soak's growth).
# One simulated node's real syncd and audiod (tests/sim_node.sh, 48 kHz)
# feed the real fft, and the real detect (apps/profiles/frog.ini) reads
# its frames.  fft runs as the units run it, G_SLICE=always-malloc
# (libdev/heap.h; its status says slices=malloc).  fft is stopped for 4 s
# (192 000 samples of backlog, which audiod then sends in chunks of up to
# a whole 128 kB message; 750 frames fft then publishes to detect at once)
# and continued:
#  1. it catches up: frames computed grow by at least the stall's worth
#     (4 s / hop 256 at 48 kHz = 750 frames) with no gap reported;
#  2. malloc's memory in use (fft/0/status "heap: N kB in use") after the
#     catch-up is within 16 kB of before (eight frames in flight; measured
#     +1 kB).  A chunk taken whole kept its converted copy (4 bytes a
#     sample) and the STFT's buffer (the next power of two) at their
#     high-water marks: +382 kB (fft takes blocks of 4096 since); the
#     STFT's buffer then still stepped from two frames to BLOCK + a frame
#     at the first catch-up: +24 kB (reserved at start since,
#     dsp_stft_reserve); GLib's slice allocator kept the queue's nodes of
#     the 750 frames: +100 kB without G_SLICE.
#     Under AddressSanitizer malloc's figures are ASan's own (0 in use):
#     that part says so and is not judged.
# Exit 0 pass, 1 fail.
set -u
b=$1; src=$2
. "$src/tests/sim_node.sh"
w=$CHORUS_RUN/fft-stall
mkdir -p "$w"
FFT=; DET=
cleanup() {
    [ -n "$DET" ] && kill "$DET" 2>/dev/null
    [ -n "$FFT" ] && { kill -CONT "$FFT"; kill "$FFT"; } 2>/dev/null
    sim_node_stop
    wait 2>/dev/null
}
trap cleanup EXIT INT TERM
fail() { st_msg="$*"; st_fail test_fft_stall fft.log det.log audiod.log; }
status() { "$b/bin/chorus-cat" fft/0/status 2>/dev/null; }
computed() { status | sed -n 's/^frames computed=\([0-9]*\).*/\1/p'; }
gaps() { status | sed -n 's/^frames .* gaps=\([0-9]*\).*/\1/p'; }
in_use() { status | sed -n 's/^heap: \([0-9]*\) kB in use.*/\1/p'; }
has_frames() { [ "$(computed)" -gt 200 ] 2>/dev/null; }
subscribed() { status | grep -q 'subscribers=1 '; }

sim_node_start "$b" "$src" || exit 1
cd "$w" || exit 1
printf '[fft]\nstatus_interval_s = 0.1\n' > fft.conf
"$b/bin/fft" -c fft.conf > fft.log 2>&1 & FFT=$!
"$b/bin/detect" -c /dev/null -p "$src/apps/profiles/frog.ini" > det.log 2>&1 & DET=$!
wait_for 30 "fft's first frames" has_frames
wait_for 30 "detect reading fft's frames" subscribed
status | grep -q ' slices=malloc$' || fail "fft's slices are not malloc's under G_SLICE=always-malloc: $(status | grep '^heap')"
sleep 2 # past the start's allocations (plans, wisdom)
heap0=$(in_use) gaps0=$(gaps) n0=$(computed)
kill -STOP "$FFT"
sleep 4
kill -CONT "$FFT"
caught_up() { [ "$(computed)" -ge $((n0 + 4 * 48000 / 256)) ]; }
wait_for 20 "fft to catch up after the stall" caught_up
sleep 2
heap1=$(in_use) gaps1=$(gaps) n1=$(computed)
echo "test_fft_stall: frames $n0 -> $n1, gaps $gaps0 -> $gaps1, heap in use $heap0 -> $heap1 kB"
[ "$gaps1" = "$gaps0" ] || fail "the stall was reported as a gap ($gaps0 -> $gaps1): audiod held the backlog"
if [ "${heap0:-0}" = 0 ]; then
    echo "test_fft_stall: malloc reports nothing in use (AddressSanitizer): growth not judged"
elif [ "$heap1" -gt $((heap0 + 16)) ]; then
    fail "heap in use grew $heap0 -> $heap1 kB across a 4 s stall (a buffer kept the backlog's size)"
fi
echo "test_fft_stall: PASS"
