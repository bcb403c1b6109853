#!/usr/bin/python3
"""tests/web_api.py BASE TOKEN NODES_FILE PROXY_CONF — every chorus-web
endpoint and its refusals (docs/protocol.md "chorus-web"), standard library
only; last, the last node's chorus-proxy (the one started with PROXY_CONF
under CHORUS_NODE=N) is killed and that node must be shown down.
Prints one line per check; exit 0 when all pass, 1 otherwise."""
import io, json, socket, sys, time, urllib.error, urllib.parse, urllib.request, wave

base, token, nodes_file, proxy_conf = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
nodes = [int(l.split()[0]) for l in open(nodes_file) if l.strip() and not l.startswith("#")]
failed = 0


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failed += 1


def get(path, auth=True, how="header", tok=None, timeout=20):
    tok = token if tok is None else tok
    url, headers = base + path, {}
    if auth and how == "header":
        headers["Authorization"] = "Bearer " + tok
    elif auth and how == "query":
        url += ("&" if "?" in url else "?") + "token=" + tok
    elif auth and how == "cookie":
        headers["Cookie"] = "chorus_token=" + tok
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def get_json(path, **kw):
    st, h, body = get(path, **kw)
    try:
        return st, json.loads(body)
    except ValueError:
        return st, None


def refused(path, status, param, **kw):
    st, j = get_json(path, **kw)
    ok = st == status and isinstance(j, dict) and "error" in j and (param is None or j.get("param") == param)
    check(ok, "%s %s -> %d %s (%s)" % (kw.get("how", "header") if kw.get("auth", True) else "no token", path, st,
                                         (j or {}).get("param"), (j or {}).get("error")))

# --- a browser that never reads: opened first, it stays stalled through
# every check below, which must all be answered all the same ---------------
host = urllib.parse.urlsplit(base)
slow = socket.socket()
slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
slow.connect((host.hostname, host.port))
slow.sendall(("GET /api/events?spec=%d HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % (nodes[0], token)).encode())

# --- refusals: no token, a wrong one, in every place --------------------------
wrong = "0" * 64
for p in ["/", "/app.js", "/api/info", "/api/nodes", "/api/calls", "/api/events", "/api/audio?node=1&from=1&to=2"]:
    refused(p, 401, "token", auth=False)
for how in ["header", "query", "cookie"]:
    refused("/api/nodes", 401, "token", how=how, tok=wrong)
refused("/api/nodes", 401, "token", tok="not-hex")
# and the right one in every place
for how in ["header", "query", "cookie"]:
    st, j = get_json("/api/nodes", how=how)
    check(st == 200 and isinstance(j, list), "token by %s accepted" % how)
st, h, body = get("/?token=" + token, auth=False)
check(st == 200 and b"<svg id=\"map\"" in body and "chorus_token=" in h.get("Set-Cookie", ""),
      "GET /?token= serves the page and sets the cookie")
for f, t in [("/app.js", "javascript"), ("/style.css", "text/css")]:
    st, h, body = get(f, how="cookie")
    check(st == 200 and t in h.get("Content-Type", "") and len(body) > 100, "static %s (%s)" % (f, h.get("Content-Type")))

# --- state -----------------------------------------------------------------------
st, info = get_json("/api/info")
check(st == 200 and info["nodes"] == len(nodes) and info["authenticated"] and info["truth"], "/api/info %s" % info)
st, ns = get_json("/api/nodes")
ids = sorted(n["id"] for n in ns) if st == 200 else []
check(ids == sorted(nodes), "/api/nodes lists every node of the nodes file: %s" % ids)
for n in ns:
    check(n["state"] in ("up", "degraded") and n["services"].get("syncd") and n["services"].get("audiod")
          and n["services"].get("collab") and n.get("tstamp") == "sim" and "xruns" in n,
          "node%d: %s, services %s, tstamp %s" % (n["id"], n["state"], n["services"], n.get("tstamp")))
    check(any(c["to"] == "global" or c["from"] == "global" for c in n["conversions"]) or n.get("root") is not None,
          "node%d: sync health (root %s, %d conversions, %d fits)" % (n["id"], n.get("root"), len(n["conversions"]), len(n["peers"])))
st, one = get_json("/api/node?id=%d" % nodes[0])
check(st == 200 and "frames captured=" in one["devices"]["audio/0/status"] and "rbs node" in one["devices"]["sync/rbs"],
      "/api/node?id=%d has every status device's text" % nodes[0])
st, calls = get_json("/api/calls")
ok_calls = [c for c in calls if c["status"] == "ok"] if st == 200 else []
check(len(ok_calls) >= 1 and all(k in ok_calls[0] for k in ("x", "y", "ell95_major", "ell95_minor", "ell95_angle_deg", "id", "t_global_ns")),
      "/api/calls: %d calls, %d ok, with 95 %% ellipses" % (len(calls), len(ok_calls)))
last = max(c["id"] for c in calls) if calls else 0
st, newer = get_json("/api/calls?since=%d" % last)
check(st == 200 and newer == [] or all(c["id"] > last for c in newer), "/api/calls?since= only newer ones")
st, truth = get_json("/api/truth")
check(st == 200 and truth.get("simulated") and len(truth["sources"]) >= 1, "/api/truth: %d sources" % len(truth.get("sources", [])))
st, dets = get_json("/api/detections?node=%d" % nodes[0])
check(st == 200 and len(dets) >= 1 and all(d["node"] == nodes[0] for d in dets), "/api/detections?node=: %d" % len(dets))
st, alld = get_json("/api/detections")
check(st == 200 and len(alld) >= len(dets), "/api/detections (all nodes): %d" % len(alld))

# --- spectrogram: columns, and more of them later -----------------------------------
st, sp = get_json("/api/spectrogram?node=%d" % nodes[1])
time.sleep(2)
st2, sp2 = get_json("/api/spectrogram?node=%d" % nodes[1])
check(st == 200 and st2 == 200 and sp2["columns"] > 0 and sp2["bins"] == 128 and sp2["rate"] > 0 and
      len(__import__("base64").b64decode(sp2["data"])) == sp2["columns"] * sp2["bins"] and
      (sp["first_frame"] is None or sp2["column"] > sp["column"]),
      "/api/spectrogram: %d columns of %d bins at %d Hz, advancing (column %s -> %s)" % (sp2["columns"], sp2["bins"], sp2["rate"], sp["column"], sp2["column"]))

# --- a call's aligned clips, and audio by global time ----------------------------------
def wav_of(body):
    w = wave.open(io.BytesIO(body))
    return w.getframerate(), w.getnchannels(), w.getnframes()

c = ok_calls[0] if ok_calls else calls[0]
st, cj = get_json("/api/call?id=%d" % c["id"])
check(st == 200 and len(cj["clips"]) == len(c["nodes"]) and cj["to_ns"] > cj["from_ns"], "/api/call?id=%d: %d clips" % (c["id"], len(cj.get("clips", []))))
t0s = []
for clip in cj.get("clips", []):
    st, h, body = get(clip["url"])
    good = st == 200 and h.get("Content-Type") == "audio/wav"
    if good:
        rate, ch, n = wav_of(body)
        good = rate > 0 and n >= 0.9 * rate * (cj["to_ns"] - cj["from_ns"]) / 1e9 and b"chorus node=" in body
        t0s.append(float(h["X-Chorus-T0-Global-Ns"]))
    check(good, "%s -> %d %s %s" % (clip["url"], st, h.get("Content-Type"), h.get("X-Chorus-T0-Global-Ns")))
# aligned by global time: every clip starts within one frame period (plus its s.e.) of the window
check(t0s and max(abs(t - cj["from_ns"]) for t in t0s) < 1e6, "clips start at the same global time: %s" % [round(t - cj["from_ns"]) for t in t0s])
t = c["t_global_ns"]
st, h, body = get("/api/audio?node=%d&from=%d&to=%d" % (nodes[0], t - 10**9, t + 10**9))
check(st == 200 and wav_of(body)[2] > 0 and "attachment" in h.get("Content-Disposition", ""), "/api/audio 2 s -> %d, %s frames" % (st, wav_of(body)[2] if st == 200 else "-"))

# --- device browser -------------------------------------------------------------------
st, dv = get_json("/api/devices?node=%d" % nodes[2])
names = {d["name"]: d.get("pattern") for d in dv["devices"]} if st == 200 else {}
check(names.get("sync/rbs") == "status" and names.get("audio/0/data") == "sensor" and names.get("sync/command") == "command",
      "/api/devices: %d devices with their patterns" % len(names))
for d in [n for n, p in names.items() if p == "status"]:
    st, r = get_json("/api/device?node=%d&name=%s" % (nodes[2], d))
    check(st == 200 and len(r["text"]) > 0, "/api/device %s: %d bytes" % (d, len(r["text"]) if st == 200 else 0))
refused("/api/device?node=%d&name=audio/0/data" % nodes[2], 422, "name")
refused("/api/device?node=%d&name=no/such" % nodes[2], 404, "name")

# --- malformed requests: which parameter, and why; the service stays up ------------------
refused("/api/audio?node=%d&from=abc&to=5" % nodes[0], 400, "from")
refused("/api/audio?node=%d&from=10&to=5" % nodes[0], 400, "to")
refused("/api/audio?node=%d&from=1&to=%d" % (nodes[0], 61 * 10**9), 400, "to")
refused("/api/audio?node=%d&to=5" % nodes[0], 400, "from")
refused("/api/audio?node=99&from=1&to=5", 404, "node")
refused("/api/audio?node=-1&from=1&to=5", 400, "node")
refused("/api/audio?from=1&to=5", 400, "node")
refused("/api/clip?call=999999&node=1", 404, "call")
refused("/api/call?id=x", 400, "id")
refused("/api/node?id=1.5", 400, "id")
refused("/api/detections?from=9&to=3", 400, "to")
refused("/api/spectrogram", 400, "node")
refused("/api/events?spec=77", 404, "spec")
refused("/api/nope", 404, None)
refused("/../etc/passwd", 404, None)
# not HTTP at all: answered (400) or closed, and the service goes on
g = socket.create_connection((host.hostname, host.port), 10)
g.sendall(b"\x00\x01\xffGARBAGE /\x7f HTTP/9\r\n\r\n")
g.settimeout(10)
try:
    answer = g.recv(200)
except OSError:
    answer = b""
g.close()
check(answer == b"" or answer[:9] in (b"HTTP/1.0 ", b"HTTP/1.1 ") and answer[9:12] == b"400", "a malformed HTTP request: %r" % answer[:40])
st, j = get_json("/api/info")
check(st == 200 and j["clients"] >= 1, "the stalled client is still connected (%d clients), the rest was served" % j["clients"])
check(st == 200 and j["bad_requests"] >= 10 and j["refused"] >= 10, "still serving after the bad requests (%s)" % j)

# --- live: server-sent events ---------------------------------------------------------------
req = urllib.request.Request(base + "/api/events?spec=%d" % nodes[0], headers={"Authorization": "Bearer " + token})
seen, t_end = set(), time.time() + 20
with urllib.request.urlopen(req, timeout=20) as r:
    check(r.headers.get("Content-Type") == "text/event-stream", "/api/events is text/event-stream")
    while time.time() < t_end and not {"hello", "node", "spec", "det"} <= seen:
        line = r.readline().decode()
        if line.startswith("event: "):
            seen.add(line[7:].strip())
check({"hello", "node", "spec", "det"} <= seen, "/api/events sent %s" % sorted(seen))
slow.close()

# --- a node whose proxy dies is shown down, and the rest stays up -----------
import glob, os, signal
victim, gone = nodes[-1], None
for p in glob.glob("/proc/[0-9]*"):
    try:
        cmd = open(p + "/cmdline", "rb").read().split(b"\0")
        env = open(p + "/environ", "rb").read().split(b"\0")
    except OSError:
        continue
    if os.path.basename(cmd[0]) == b"chorus-proxy" and proxy_conf.encode() in cmd and ("CHORUS_NODE=%d" % victim).encode() in env:
        gone = int(os.path.basename(p))
check(gone is not None, "node%d's chorus-proxy found (pid %s)" % (victim, gone))
if gone:
    os.kill(gone, signal.SIGKILL)
    states, t_end = {}, time.time() + 30
    while time.time() < t_end:
        st, ns = get_json("/api/nodes")
        states = {n["id"]: n["state"] for n in ns}
        if states.get(victim) == "down":
            break
        time.sleep(0.5)
    check(states.get(victim) == "down" and all(s != "down" for i, s in states.items() if i != victim),
          "node%d shown down when its proxy died, the others not: %s" % (victim, states))
print("web_api: %d failed" % failed)
sys.exit(1 if failed else 0)
