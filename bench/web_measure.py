#!/usr/bin/python3
"""bench/web_measure.py BASE URL TOKEN DIR NODES_FILE SRCDIR CSV SECONDS —
bench/web's measurements on a running chorus-sim --web field (DIR: the
field's directory, tests/web_field.sh): the page in headless Chromium
(tests/web_browser.py --bench: open time, when each call reached the
page), an SSE client on /api/events (when each call reached it), the time
each result line appeared in collab's JSON-lines file (the publication,
polled every 5 ms: collab writes the line and publishes the packet
together), and the CPU of chorus-web and of every chorus-proxy over the
window (/proc/PID/stat), per node.  Prints a table and writes CSV."""
import glob, json, os, statistics, subprocess, sys, threading, time, urllib.request

base, url, token, d, nodes_file, src, csv, secs = sys.argv[1:9]
secs = float(secs)
nodes = [l for l in open(nodes_file) if l.strip() and not l.startswith("#")]
stop = threading.Event()
published, sse_seen = {}, {}


def tail():
    pos = {}
    while not stop.is_set():
        now = time.time()
        for f in glob.glob(os.path.join(d, "node*-collab.jsonl")):
            with open(f) as fh:
                fh.seek(pos.get(f, 0))
                data = fh.read()
                # only whole lines
                cut = data.rfind("\n") + 1
                pos[f] = pos.get(f, 0) + len(data[:cut].encode())
                for line in data[:cut].splitlines():
                    try:
                        j = json.loads(line)
                        published.setdefault((j["reporter"], j["seq"]), now)
                    except (ValueError, KeyError):
                        pass
        time.sleep(0.005)


def sse():
    req = urllib.request.Request(base + "/api/events", headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=secs + 60) as r:
        event = None
        while not stop.is_set():
            line = r.readline().decode()
            if not line:
                break
            if line.startswith("event: "):
                event = line[7:].strip()
            elif line.startswith("data: ") and event == "call":
                j = json.loads(line[6:])
                sse_seen.setdefault((j["reporter"], j["seq"]), time.time())


def pids(pattern):
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out]


def cpu_s(pid):
    try:
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


# the tail has seen every line written so far before the clients start
threads = [threading.Thread(target=tail, daemon=True)]
threads[0].start()
time.sleep(0.5)
threads.append(threading.Thread(target=sse, daemon=True))
threads[1].start()
web_p, proxy_p = pids(os.path.join(d, "sim", "web.conf")), pids(os.path.join(d, "sim", "proxy.conf"))
browser = subprocess.Popen([sys.executable, os.path.join(src, "tests", "web_browser.py"), url, nodes_file, d, "--bench", str(secs)],
                           stdout=subprocess.PIPE, text=True)
lines, t0, c0 = [], None, None
for line in browser.stdout:
    lines.append(line.split())
    if line.startswith("page_live_ms") and t0 is None:  # the page is open: the CPU window starts
        t0, c0 = time.time(), (sum(cpu_s(p) for p in web_p), sum(cpu_s(p) for p in proxy_p))
t1, c1 = time.time(), (sum(cpu_s(p) for p in web_p), sum(cpu_s(p) for p in proxy_p))
rc = browser.wait()
time.sleep(0.5)
stop.set()
page = {l[0]: float(l[1]) for l in lines if l and l[0].startswith("page_")}
browser_seen = {(int(l[1]), int(l[2])): int(l[3]) / 1000 for l in lines if l and l[0] == "call"}


def lat(seen):
    v = sorted(1000 * (t - published[k]) for k, t in seen.items() if k in published)
    if not v:
        return (0, float("nan"), float("nan"), float("nan"))
    return (len(v), statistics.median(v), v[min(len(v) - 1, int(0.9 * len(v)))], v[-1])


n = len(nodes)
dt = (t1 - t0) if t0 else float("nan")
web_pct = 100 * (c1[0] - c0[0]) / dt if t0 else float("nan")
proxy_pct = 100 * (c1[1] - c0[1]) / dt if t0 else float("nan")
rows = [("page_load", "ms", page.get("page_load_ms", float("nan")), 1000, "load event, headless Chromium on this host"),
        ("page_live", "ms", page.get("page_live_ms", float("nan")), 1000, "first live data (SSE hello) after navigation"),
        ]
bl, sl = lat(browser_seen), lat(sse_seen)
# a negative latency: the page had the result before the tail saw collab's
# line (the reference's resolution is the 5 ms poll and collab's write)
rows += [("update_browser_p50", "ms", bl[1], 1000, "collab result line -> page (%d calls; +-5 ms reference)" % bl[0]),
         ("update_browser_max", "ms", bl[3], 1000, ""),
         ("update_sse_p50", "ms", sl[1], 1000, "collab result line -> SSE client (%d calls)" % sl[0]),
         ("update_sse_max", "ms", sl[3], 1000, ""),
         ("cpu_web_per_node", "%core", web_pct / n, 2, "chorus-web (%.2f %% for %d nodes, %.0f s, browser open)" % (web_pct, n, dt)),
         ("cpu_proxies_per_node", "%core", proxy_pct / n, 2, "chorus-proxy, mean over the nodes"),
         ("cpu_web_plus_proxies_per_node", "%core", (web_pct + proxy_pct) / n, 2, "the aim: under 2 % per node at 16 kHz")]
print("%-30s %-6s %10s %8s  %s" % ("metric", "unit", "value", "aim", "note"))
with open(csv, "w") as f:
    f.write("metric,unit,value,aim\n")
    for m, u, v, a, note in rows:
        print("%-30s %-6s %10.2f %8g  %s%s" % (m, u, v, a, note, "" if v < a else "  (over the aim)"))
        f.write("%s,%s,%.3f,%g\n" % (m, u, v, a))
print("wrote %s" % csv)
sys.exit(0 if rc == 0 else 1)
