#!/bin/sh
# tests/test_proxy_node.sh BUILD SRCDIR — the tools on "another machine"
# against one simulated node's real syncd and audiod (tests/sim_node.sh,
# node 2) through its chorus-proxy on loopback: the other machine is another
# run directory with no devices of its own, a nodes file listing node 2
# without an address (127.0.0.1, port + 2, as chorus-sim's nodes) and the
# key.  synctool --node 2 ticker and chorus-cat node2:audio/0/status print
# what they print on the node; chorus-ctl node2:sync/command reaches syncd;
# audioget --node 2 fetches the same samples, byte for byte, as audioget on
# the node (and chorus-cat -r the same raw frames); a wrong key and a
# missing key are refused with the reason.  Exit 0 pass, 1 fail, 77 without
# python3 (the WAV comparison).
set -u
b=$1; src=$2
command -v /usr/bin/python3 >/dev/null || { echo "test_proxy_node: SKIP: python3 not found (make deps)"; exit 77; }
. "$src/tests/sim_node.sh"
w=$CHORUS_RUN/proxy-test
mkdir -p "$w/other"
PROXY=
cleanup() {
    [ -n "$PROXY" ] && kill "$PROXY" 2>/dev/null
    sim_node_stop
    wait 2>/dev/null
}
trap cleanup EXIT INT TERM
fail() {
    echo "test_proxy_node: FAIL: $*"
    [ -f "$w/proxy.log" ] && { echo "--- proxy.log"; tail -8 "$w/proxy.log"; }
    exit 1
}
sim_node_start "$b" "$src" || fail "the node did not start"
port=$(/usr/bin/python3 -c 'import socket
s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null) || port=$((30000 + $$ % 20000))
head -c 32 /dev/urandom > "$w/key"
printf '[proxy]\nport = %s\nkey_file = %s\nwritable = sync/command\nkeepalive_ms = 250\n' "$port" "$w/key" > "$w/proxy.conf"
"$b/bin/chorus-proxy" -c "$w/proxy.conf" > "$w/proxy.log" 2>&1 & PROXY=$!
printf '# the field, as the other machine knows it\n2 0 0 0\n' > "$w/nodes"
# other CMD...: run CMD as on the other machine
other() {
    env -u CHORUS_NODE CHORUS_RUN="$w/other" CHORUS_NODES="$w/nodes" CHORUS_PROXY_PORT="$port" \
        CHORUS_KEY_FILE="${KEY:-$w/key}" "$@"
}
i=0
until other "$b/bin/chorus-cat" node2:proxy/status >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 100 ] && fail "chorus-proxy not serving after 10 s"; sleep 0.1
done

# the ticker: the same entries (their first two fields) as on the node.
# syncd may add one between the two reads (audiod's pair fitted a moment
# after start, a history piece): the reads are repeated, up to 5 times,
# until two agree.
k=0
while :; do
    "$b/bin/synctool" ticker | awk '{print $1, $2}' > "$w/local.tk" || fail "synctool ticker on the node"
    other "$b/bin/synctool" --node 2 ticker > "$w/remote.tk.full" 2> "$w/err" || fail "synctool --node 2 ticker: $(cat "$w/err")"
    awk '{print $1, $2}' "$w/remote.tk.full" > "$w/remote.tk"
    [ -s "$w/local.tk" ] && cmp -s "$w/local.tk" "$w/remote.tk" && break
    k=$((k + 1))
    [ $k -ge 5 ] && fail "remote ticker differs: $(head -3 "$w/remote.tk"); local: $(head -3 "$w/local.tk")"
    sleep 0.5
done
# a status device
other "$b/bin/chorus-cat" node2:audio/0/status | grep -q 'frames captured=' || fail "chorus-cat node2:audio/0/status"
# a command, answered by syncd itself (writable through this proxy)
other "$b/bin/chorus-ctl" node2:sync/command help > "$w/help" 2>&1 || fail "chorus-ctl node2:sync/command help: $(cat "$w/help")"
grep -q 'obs' "$w/help" || fail "sync/command's help: $(head -3 "$w/help")"
# audio: the same frames from the node and through the proxy
cap=$("$b/bin/chorus-cat" audio/0/status | sed -n 's/.*frames captured=\([0-9]*\).*/\1/p' | head -1)
[ -n "$cap" ] || fail "no frame count on audio/0/status"
first=$((cap - 8000)); last=$((cap - 4000))
"$b/bin/audioget" --first $first --last $last -o "$w/local.wav" 2> "$w/err" || fail "audioget on the node: $(cat "$w/err")"
other "$b/bin/audioget" --node 2 --first $first --last $last -o "$w/remote.wav" 2> "$w/err" ||
    fail "audioget --node 2: $(cat "$w/err")"
# the samples (the files' comments carry the first frame's time as each
# request converted it: a fit updated in between changes its digits)
data() {
    /usr/bin/python3 -c 'import sys, hashlib
b = open(sys.argv[1], "rb").read(); i = 12
while i + 8 <= len(b):
    n = int.from_bytes(b[i + 4:i + 8], "little")
    if b[i:i + 4] == b"data": print(hashlib.sha256(b[i + 8:i + 8 + n]).hexdigest(), n); break
    i += 8 + n + (n & 1)' "$1"
}
[ -n "$(data "$w/local.wav")" ] && [ "$(data "$w/local.wav")" = "$(data "$w/remote.wav")" ] ||
    fail "audio through the proxy differs from the node's: $(data "$w/local.wav") / $(data "$w/remote.wav")"
if grep -aq 'chorus t0_clock=' "$w/local.wav"; then
    grep -aq 'chorus t0_clock=' "$w/remote.wav" || fail "the remote file carries no time, the local one does"
fi
# and the raw frames, as chorus-cat reads them
"$b/bin/chorus-cat" -r --from=$first --to=$last audio/0/data > "$w/local.raw" 2>/dev/null || fail "chorus-cat -r on the node"
other "$b/bin/chorus-cat" -r --from=$first --to=$last node2:audio/0/data > "$w/remote.raw" 2> "$w/err" ||
    fail "chorus-cat -r node2:audio/0/data: $(cat "$w/err")"
[ -s "$w/local.raw" ] && cmp -s "$w/local.raw" "$w/remote.raw" || fail "raw frames through the proxy differ"
# refusals: a wrong key, no key
head -c 32 /dev/urandom > "$w/wrong"
KEY=$w/wrong other "$b/bin/chorus-cat" node2:audio/0/status > /dev/null 2> "$w/err" && fail "a wrong key was accepted"
grep -q 'wrong mac' "$w/err" || fail "wrong key: $(cat "$w/err")"
KEY=/dev/null other "$b/bin/chorus-cat" node2:audio/0/status > /dev/null 2> "$w/err" && fail "no key was accepted"
grep -q 'no mac' "$w/err" || fail "no key: $(cat "$w/err")"
kill -0 "$PROXY" || fail "chorus-proxy died"
stamped=no; grep -aq 'chorus t0_clock=' "$w/local.wav" && stamped=yes
echo "test_proxy_node: ticker $(wc -l < "$w/remote.tk") lines, audio frames $first..$last identical (files time-stamped: $stamped), refusals ok"
echo "100%: Checks: 1, Failures: 0, Errors: 0"
