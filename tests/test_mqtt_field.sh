#!/bin/sh
# tests/test_mqtt_field.sh BUILD SRCDIR — chorus-mqtt on every node of a
# simulated field (chorus-sim sim/scenarios/default.ini: six nodes, the real
# syncd, audiod, fft, detect and collab on each) publishing to a real
# mosquitto broker (Debian's, on a free loopback port): every located call
# collab reported (its --jsonl) arrives as a `location` message of the
# reporting node with collab's result unchanged, every node's detections
# and health arrive, and each node's mseq runs 1, 2, … without a gap.  What
# was still queued when chorus-sim stopped the nodes is counted on disk,
# never lost.  Exit 0 pass, 1 fail, 77 without mosquitto or python3.
set -u
b=$1; src=$2
for t in /usr/sbin/mosquitto /usr/bin/python3; do
    command -v $t >/dev/null || { echo "test_mqtt_field: SKIP: $t not found (make deps installs mosquitto)" >&2; exit 77; }
done
w=$CHORUS_RUN/field
mkdir -p "$w"
BROKER=; SUB=
trap 'kill $SUB $BROKER 2>/dev/null; wait 2>/dev/null' EXIT INT TERM
fail() { echo "test_mqtt_field: FAIL: $*"; tail -5 "$w/sim.log" 2>/dev/null; exit 1; }
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'user %s\nlistener %s 127.0.0.1\nallow_anonymous true\n' "$(id -un)" "$port" > "$w/broker.conf"
/usr/sbin/mosquitto -c "$w/broker.conf" > "$w/broker.log" 2>&1 & BROKER=$!
/usr/bin/python3 -c "import socket, time
for i in range(100):
    try:
        socket.create_connection(('127.0.0.1', $port), 1).close(); break
    except OSError:
        time.sleep(0.1)" || fail "the broker does not listen"
"$b/tests/mqtt_sub" 127.0.0.1 "$port" field-reader 'chorus/#' "$w/out" > "$w/sub.log" 2>&1 & SUB=$!
i=0
until grep -q subscribed "$w/sub.log" 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 100 ] && fail "the subscriber did not subscribe"; sleep 0.1
done

# collab's ports: a base below the ephemeral range whose ports all bind now
# (42000 + pid once met node 3's clip port busy under make check
# SANITIZE=1, and the field did not start).
base=$(/usr/bin/python3 "$src/tests/free_base.py") || fail "no free ports for collab"
printf '[collab]\nnodes = %s/sim/nodes.txt\nshare_address = 127.255.255.255\nshare_port = %d\nclip_port = %d\nmap_every = 1000\n' \
    "$w" "$base" $((base + 1)) > "$w/collab.conf"
printf '[mqtt]\nhost = 127.0.0.1\nport = %s\nfield = sim\nhealth_interval_s = 2\n' "$port" > "$w/mqtt.conf"
nice -n 5 "$b/bin/chorus-sim" "$src/sim/scenarios/default.ini" --duration 30 --out "$w/sim" --bin "$b/bin" \
    --app fft --app "detect -p $src/apps/profiles/frog.ini --jsonl $w/node%n-detect.jsonl" \
    --app "collab -c $w/collab.conf --jsonl $w/node%n-collab.jsonl" \
    --app "chorus-mqtt -c $w/mqtt.conf" > "$w/sim.log" 2>&1
rc=$?
# chorus-sim's own verdict is on the clocks (>5 s.e.); this test is about
# what reached the broker, so only a failure to run counts here.
[ $rc -le 1 ] || fail "chorus-sim exited $rc"
sleep 1
kill "$SUB"; wait "$SUB" || fail "the subscriber could not write every message"; SUB=
# what each node's chorus-mqtt still held when it was stopped
for q in $(find "$CHORUS_RUN" -type d -name mqtt-queue); do
    n=$(echo "$q" | sed -n 's|.*/node\([0-9]*\)/.*|\1|p')
    echo "${n:-?} $(ls "$q" | grep -c '\.msg$')"
done > "$w/left"
/usr/bin/python3 - "$w" <<'EOP' || fail "the field's messages are not what collab and detect reported"
import glob, json, os, sys
w = sys.argv[1]
left = {}
for line in open(os.path.join(w, "left")):
    n, k = line.split()
    if n != "?":
        left[int(n)] = int(k)
by_node = {}
for line in open(os.path.join(w, "out")):
    topic, payload = line.rstrip("\n").split("\t", 1)
    if topic.endswith("/online"):
        continue
    m = json.loads(payload)
    assert topic == "chorus/sim/%d/%s" % (m["node"], m["kind"]), topic
    by_node.setdefault(m["node"], []).append(m)
nodes = sorted(int(os.path.basename(p)[4:].split("-")[0]) for p in glob.glob(os.path.join(w, "node*-detect.jsonl")))
assert nodes and sorted(by_node) == nodes, (nodes, sorted(by_node))
located = dets = 0
for n in nodes:
    ms = by_node[n]
    seen, first = [], []
    for m in ms:  # QoS 1 repeats (none expected without a broker restart) dropped by mseq
        if not first or m["mseq"] > first[-1]:
            first.append(m["mseq"]); seen.append(m)
    assert first == list(range(1, len(first) + 1)), "node %d: mseq gaps %s" % (n, first[:10])
    # what this node's chorus-mqtt took in (its last log line): chorus-sim
    # stops the apps in some order, and an event detect or collab wrote
    # after chorus-mqtt stopped never reached it
    st = [l for l in open(os.path.join(w, "sim", "node%d-chorus-mqtt.log" % n)) if "stopped: received" in l]
    assert st, "node %d: chorus-mqtt did not stop cleanly" % n
    rx = dict(kv.split("=") for kv in st[-1].split("received ")[1].replace(";", "").split() if "=" in kv)
    rx = {k: int(v) for k, v in rx.items()}
    assert rx["queued"] == left.get(n, 0), (n, rx, left.get(n))
    assert rx["malformed"] == 0, (n, rx)
    cp = os.path.join(w, "node%d-collab.jsonl" % n)
    col = [json.loads(l) for l in open(cp)] if os.path.exists(cp) else []
    loc = [m["result"] for m in seen if m["kind"] == "location"]
    assert loc == col[:len(loc)], "node %d: locations differ from collab's results" % n
    assert rx["locations"] - len(loc) <= rx["queued"] and len(loc) <= rx["locations"] <= len(col), (n, rx, len(loc), len(col))
    det = [json.loads(l) for l in open(os.path.join(w, "node%d-detect.jsonl" % n))]
    got = [m for m in seen if m["kind"] == "detection"]
    assert rx["detections"] - len(got) <= rx["queued"], "node %d: %d detections taken in, %d delivered, %d queued" % (
        n, rx["detections"], len(got), rx["queued"])
    if got:
        # an event with no cpu time (its onset in an overrun's lost frames:
        # seen under ASan) is kept in the JSON-lines file but never sent
        # (apps/detect/main.c publish), so it is not expected on the broker
        d0 = [e for e in det if e["seq"] >= got[0]["seq"] and e.get("cpu_ns") is not None]
        assert [g["seq"] for g in got] == [e["seq"] for e in d0[:len(got)]], "node %d: detections" % n
    assert any(m["kind"] == "health" for m in seen), "node %d: no health" % n
    located += len(loc); dets += len(got)
assert located > 0, "no located call reached the broker"
print("test_mqtt_field: %d nodes: %d located calls (collab's results, unchanged), %d detections, %d messages in all; "
      "%d left queued at the stop" % (len(nodes), located, dets, sum(len(v) for v in by_node.values()), sum(left.values())))
EOP
echo "test_mqtt_field: pass"
