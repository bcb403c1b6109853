#!/bin/sh
# tests/test_mqtt.sh BUILD SRCDIR — chorus-mqtt against a real mosquitto
# broker (Debian's, started here on free loopback ports), with one simulated
# node's real syncd, audiod, fft and detect (apps/profiles/frog.ini on the
# pulse trains of tests/data/audiod.ini) feeding it:
#  1. username/password on a plain listener; a persistent subscriber
#     (tests/mqtt_sub.c) records every message;
#  2. the broker is stopped mid-run and started again: chorus-mqtt queues on
#     disk (its status says so) and delivers on reconnect;
#  3. the broker is stopped again and chorus-mqtt itself restarted while it
#     is down: the queue on disk is delivered by the new process;
#  4. a second chorus-mqtt (node 3) connects over TLS with a client
#     certificate; one without a certificate is refused and says why;
# then every message of node 2 arrived, in order (mseq 1, 2, … with no gap
# up to the last one chorus-mqtt queued; QoS 1's repeats of the messages in
# flight at a loss, which a subscriber drops by mseq, are counted and must
# be only of those), every detection detect wrote (--jsonl) from the first
# one delivered on is delivered once after dropping repeats,
# in order, with the same times, and the health messages carry the sync
# s.e., the services and audiod's xruns.  Exit 0 pass, 1 fail, 77 when
# mosquitto, mosquitto_passwd, openssl or python3 are missing (make deps).
set -u
b=$1; src=$2
for t in /usr/sbin/mosquitto mosquitto_passwd openssl /usr/bin/python3; do
    command -v $t >/dev/null || { echo "test_mqtt: SKIP: $t not found (make deps installs mosquitto)" >&2; exit 77; }
done
. "$src/tests/sim_node.sh"
w=$CHORUS_RUN/mqtt-test
mkdir -p "$w/db"
BROKER=; SUB=; FFT=; DET=; CM=; CM3=; CM4=
cleanup() {
    for p in $CM $CM3 $CM4 $DET $FFT $SUB $BROKER; do kill "$p" 2>/dev/null; done
    sim_node_stop
    wait 2>/dev/null
}
trap cleanup EXIT INT TERM
fail() { st_msg="$*"; st_fail test_mqtt broker.log sub.log cm.log cm3.log cm4.log; }
status() { CHORUS_NODE=${2:-2} "$b/bin/chorus-cat" mqtt/status 2>/dev/null | grep -q "$1"; }
count() { _c=$(grep -c "$1" "$w/out" 2>/dev/null); echo "${_c:-0}"; }
have() { [ "$(count "$1")" -ge "$2" ]; }

ports=$(/usr/bin/python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
port=${ports% *}; tport=${ports#* }

# --- certificates: a CA, the broker's (localhost, 127.0.0.1), node 3's ---
cd "$w" || exit 1
{
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=chorus-test-ca &&
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > san.ext &&
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=localhost &&
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile san.ext &&
    openssl req -newkey rsa:2048 -nodes -keyout node3.key -out node3.csr -subj /CN=node3 &&
    openssl x509 -req -in node3.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out node3.crt -days 2
} > openssl.log 2>&1 || { cat openssl.log; fail "openssl could not make the test certificates"; }
chmod 644 server.key
mosquitto_passwd -c -b passwd chorus s3cret-node && mosquitto_passwd -b passwd reader s3cret-reader ||
    fail "mosquitto_passwd"
printf 's3cret-node\n' > pw
cat > broker.conf <<EOC
per_listener_settings true
# run as the test's own user (as root mosquitto would become "mosquitto", which
# cannot read this test's private directory)
user $(id -un)
persistence true
persistence_location $w/db/
log_dest stdout
# the broker's window towards the subscriber, as chorus-mqtt's (inflight 16):
# the analysis below bounds QoS 1's repeats by the two windows
max_inflight_messages 16
listener $port 127.0.0.1
allow_anonymous false
password_file $w/passwd
listener $tport 127.0.0.1
allow_anonymous false
cafile $w/ca.crt
certfile $w/server.crt
keyfile $w/server.key
require_certificate true
use_identity_as_username true
EOC
start_broker() {
    /usr/sbin/mosquitto -c "$w/broker.conf" >> "$w/broker.log" 2>&1 & BROKER=$!
    wait_for 10 "the broker to listen" /usr/bin/python3 -c "import socket
for p in ($port, $tport): socket.create_connection(('127.0.0.1', p), 1).close()"
}
stop_broker() { kill "$BROKER"; wait "$BROKER"; BROKER=; }
start_broker

MQTT_USER=reader MQTT_PASS=s3cret-reader "$b/tests/mqtt_sub" 127.0.0.1 "$port" test-reader 'chorus/#' "$w/out" \
    > sub.log 2>&1 & SUB=$!
wait_for 10 "the subscriber's subscription" grep -q subscribed sub.log

cat > mqtt.conf <<EOC
[mqtt]
host = 127.0.0.1
port = $port
field = test
username = chorus
password_file = $w/pw
health_interval_s = 0.25
reconnect_min_s = 0.2
reconnect_max_s = 1
queue_dir = $w/queue
EOC
start_cm() {
    "$b/bin/chorus-mqtt" -c "$w/mqtt.conf" >> "$w/cm.log" 2>&1 & CM=$!
}
sim_node_start "$b" "$src" || fail "the simulated node did not start"
start_cm
"$b/bin/fft" -c /dev/null > fft.log 2>&1 & FFT=$!
"$b/bin/detect" -c /dev/null -p "$src/apps/profiles/frog.ini" --jsonl "$w/det.jsonl" > det.log 2>&1 & DET=$!

# --- 1: detections and health arrive -------------------------------------
wait_for 60 "5 detections through the broker" have /detection 5
wait_for 10 "health with audiod up" sh -c "grep /health '$w/out' | grep -q '\"audio/0/status\":{\"up\":true'"
echo "test_mqtt: 1: $(count /detection) detections, $(count /health) health messages delivered"

# --- 2: the broker restarts mid-run ----------------------------------------
stop_broker
wait_for 10 "chorus-mqtt to notice the broker is gone" status "connected=no"
sleep 2
CHORUS_NODE=2 "$b/bin/chorus-cat" mqtt/status > status-down.txt
q=$(sed -n 's/^queue dir=.* count=\([0-9]*\) .*/\1/p' status-down.txt)
[ "${q:-0}" -ge 4 ] || fail "2: only '${q:-}' messages queued on disk while the broker was down: $(cat status-down.txt)"
n_before=$(count /health)
start_broker
wait_for 20 "chorus-mqtt to reconnect" status "connected=yes"
wait_for 20 "the queued messages to arrive" have /health $((n_before + q))
echo "test_mqtt: 2: broker restarted; $q messages had been queued on disk, delivered"

# --- 3: chorus-mqtt restarts while the broker is down ---------------------
have /detection 8 || wait_for 60 "more detections" have /detection 8
stop_broker
wait_for 10 "chorus-mqtt to notice the broker is gone again" status "connected=no"
sleep 1
kill "$CM"; wait "$CM"; CM=
left=$(ls "$w/queue" | grep -c '\.msg$')
[ "$left" -ge 2 ] || fail "3: $left messages left on disk by the stopped chorus-mqtt"
# detect goes on detecting while chorus-mqtt is down: those detections
# come from detect/events' history when it is back (its cursor in the
# queue directory), not lost
[ -s "$w/queue/cursor.detections" ] || fail "3: the stopped chorus-mqtt left no cursor"
down_at=$(wc -l < det.jsonl)
wait_for 60 "a detection while chorus-mqtt is down" sh -c "[ \$(wc -l < det.jsonl) -gt $down_at ]"
start_cm
wait_for 10 "the new chorus-mqtt" status "count="
sleep 1
start_broker
wait_for 20 "the new chorus-mqtt to connect" status "connected=yes"
echo "test_mqtt: 3: chorus-mqtt restarted with $left messages on disk, $(( $(wc -l < det.jsonl) - down_at )) detections made while it was down"
grep -q "resuming after message" "$w/cm.log" || fail "3: the new chorus-mqtt did not resume from its cursor"

# --- 4: TLS with a client certificate (node 3), and without one ------------
printf '[mqtt]\nhost = localhost\nport = %s\nfield = test\ntls = true\nca_file = %s\ncert_file = %s\nkey_file = %s\nhealth_interval_s = 0.25\nqueue_dir = %s\ndetections = false\nlocations = false\nhealth_devices = audio/0/status\n' \
    "$tport" "$w/ca.crt" "$w/node3.crt" "$w/node3.key" "$w/queue3" > mqtt3.conf
CHORUS_NODE=3 "$b/bin/chorus-mqtt" -c "$w/mqtt3.conf" > cm3.log 2>&1 & CM3=$!
printf '[mqtt]\nhost = localhost\nport = %s\nfield = test\ntls = true\nca_file = %s\nhealth_interval_s = 0.25\nqueue_dir = %s\ndetections = false\nlocations = false\nreconnect_min_s = 0.2\nreconnect_max_s = 0.5\n' \
    "$tport" "$w/ca.crt" "$w/queue4" > mqtt4.conf
CHORUS_NODE=4 "$b/bin/chorus-mqtt" -c "$w/mqtt4.conf" > cm4.log 2>&1 & CM4=$!
wait_for 20 "node 3's health over TLS" have chorus/test/3/health 3
status "tls=client-cert" 3 || fail "4: node 3's status does not say tls=client-cert"
wait_for 20 "node 4 (no client certificate) to be refused" sh -c "CHORUS_NODE=4 '$b/bin/chorus-cat' mqtt/status | grep -q 'connected=no connects=0 losses=[1-9]'"
have chorus/test/4/ 1 && fail "4: node 4 got messages through without a client certificate"
echo "test_mqtt: 4: TLS with a client certificate delivers; without one: $(CHORUS_NODE=4 "$b/bin/chorus-cat" mqtt/status | sed -n 's/^connection //p')"
kill "$CM3" "$CM4"; wait "$CM3" "$CM4"; CM3=; CM4=

# --- the end: detect stops, chorus-mqtt drains and stops -------------------
have /detection 12 || wait_for 60 "more detections after the restarts" have /detection 12
kill "$DET"; wait "$DET"; DET=
sleep 1
wait_for 20 "the queue to drain" status "count=0 .* in_flight=0"
kill "$CM"; wait "$CM"; CM=
# What is left on disk: messages whose acknowledgement had not come back
# when chorus-mqtt stopped (a health message every 0.25 s keeps one in
# flight now and then); they are sent again at the next start.
last=$(ls "$w/queue" | sed -n 's/\.msg$//p' | tr '\n' ' ')
next=$(cat "$w/queue/next" 2>/dev/null)
[ -n "$next" ] || fail "the drained queue did not record its next sequence number"
wait_for 20 "the last message (mseq $((next - 1))) at the subscriber" grep -q "\"node\":2,\"mseq\":$((next - 1))[,}]" "$w/out"
kill "$SUB"; wait "$SUB" || fail "the subscriber could not write every message"; SUB=

/usr/bin/python3 - "$w/out" "$w/det.jsonl" "$next" "$last" <<'EOP' || fail "the messages delivered are not what chorus-mqtt queued"
import json, sys
out, det, nxt = sys.argv[1], sys.argv[2], int(sys.argv[3])
left = [int(x, 16) for x in sys.argv[4].split()]
msgs = []
for line in open(out):
    topic, payload = line.rstrip("\n").split("\t", 1)
    if topic.endswith("/online"):
        assert payload in ("0", "1"), (topic, payload)
        continue
    m = json.loads(payload)
    assert m["v"] == 1 and m["field"] == "test" and topic == "chorus/test/%d/%s" % (m["node"], m["kind"]), (topic, m)
    msgs.append(m)
n2 = [m for m in msgs if m["node"] == 2]
seq = [m["mseq"] for m in n2]
# Left on disk only what was in flight (delivered, its acknowledgement
# not yet back: at-least-once, docs/mqtt.md), at most the in-flight window.
assert len(left) <= 16 and all(k in seq for k in left), "left on disk and never delivered: %s" % [
    k for k in left if k not in seq]
# The queue's "next" file is written when it drains; a message left on
# disk was numbered after it.
nxt = max([nxt] + [k + 1 for k in left])
# QoS 1 is at-least-once on each hop (docs/mqtt.md "Delivery"): a message
# whose acknowledgement was lost when the broker went down is sent again
# after the reconnection — by chorus-mqtt to the broker, and by the broker
# (from its persistence) to the subscriber — and a subscriber drops the
# repeat by its mseq.  What must hold: the first arrivals are exactly 1..N in
# order (nothing lost, nothing reordered), and a repeat is only ever of a
# message in flight on one of the two hops at a loss (each window 16): it
# comes back within 2 x 16 of the newest message seen, never an old one.
first_seen, repeats = [], []
for k in seq:
    if first_seen and k <= first_seen[-1]:
        repeats.append(k)
        assert first_seen[-1] - k < 2 * 16, "mseq %d repeated long after it arrived (newest %d)" % (k, first_seen[-1])
    else:
        first_seen.append(k)
assert first_seen == list(range(1, nxt)), "node 2's mseq not 1..%d in order: %d first arrivals, gaps %s" % (
    nxt - 1, len(first_seen), [(a, b) for a, b in zip(first_seen, first_seen[1:]) if b != a + 1][:5])
# two broker stops (chorus-mqtt's restart happens while the broker is down)
assert len(repeats) <= 2 * 2 * 16, "%d repeats" % len(repeats)
n2 = [m for i, m in enumerate(n2) if i == 0 or m["mseq"] > max(x["mseq"] for x in n2[:i])]
got = [m for m in n2 if m["kind"] == "detection"]
want = [json.loads(l) for l in open(det)]
first = got[0]["seq"]
want = [e for e in want if e["seq"] >= first]
assert [g["seq"] for g in got] == [e["seq"] for e in want], ("detections", [g["seq"] for g in got], [e["seq"] for e in want])
for g, e in zip(got, want):
    assert g["cpu_ns"] == e["cpu_ns"] and g["onset_frame"] == e["onset_frame"], (g, e)
    assert (g["global_ns"] is None and e["global_ns"] == "none") or g["global_ns"] == e["global_ns"], (g, e)
health = [m for m in n2 if m["kind"] == "health"]
ok = [h for h in health if h["sync"]["ok"]]
assert ok and all(h["sync"]["se_ns"] >= 0 for h in ok), "no health message with a sync s.e."
assert any("audio/0" in h["xruns"] for h in health), "no xruns reported"
assert any(h["services"]["detect/status"]["up"] for h in health), "detect never up"
n3 = [m for m in msgs if m["node"] == 3]
assert n3 and [m["mseq"] for m in n3] == list(range(n3[0]["mseq"], n3[0]["mseq"] + len(n3))), "node 3 over TLS"
print("test_mqtt: node 2: %d messages (mseq 1..%d all delivered, in order; %d repeats of in-flight messages at the losses, dropped by mseq): %d detections (detect's seq %d..%d, "
      "first %d of detect's not delivered: before chorus-mqtt subscribed), %d health (sync s.e. %.0f ns); node 3 (TLS): %d"
      % (len(n2), nxt - 1, len(repeats), len(got), got[0]["seq"], got[-1]["seq"], first - 1, len(health), ok[-1]["sync"]["se_ns"], len(n3)))
EOP
grep -q "^connection connected=yes" status-down.txt && fail "the status said connected while the broker was down"
echo "test_mqtt: pass"
