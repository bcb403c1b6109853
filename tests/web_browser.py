#!/usr/bin/python3
"""tests/web_browser.py URL NODES_FILE OUTDIR [--bench SECONDS] — chorus-web's
page in headless Chromium, driven through chromedriver's WebDriver HTTP API
(standard library only).  Opens URL (with its token), waits for live data
and checks the DOM: every node of the nodes file drawn on the map, at
least one located call drawn, the spectrogram updating (its column count
grows between two looks); saves OUTDIR/web.png.  With --bench it stays
SECONDS more and prints, as `key value` lines, the page's open time (load
event, and the first live data), and for each call the time the browser
got it (Date.now(), host realtime) for bench/web to compare with collab.
Exit 0 pass, 1 fail, 77 when chromium or chromedriver is missing."""
import base64, json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request

url, nodes_file, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
bench = float(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--bench" else None
nodes = sorted(int(l.split()[0]) for l in open(nodes_file) if l.strip() and not l.startswith("#"))
chrome = shutil.which("chromium") or shutil.which("chromium-browser")
driver = shutil.which("chromedriver")
if not chrome or not driver:
    print("web_browser: SKIP: %s not found (make deps installs chromium and chromium-driver)" %
          ("chromium" if not chrome else "chromedriver"))
    sys.exit(77)

s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
profile = tempfile.mkdtemp(prefix="chorus-chromium.")
log = open(os.path.join(outdir, "chromedriver.log"), "w")
proc = subprocess.Popen([driver, "--port=%d" % port], stdout=log, stderr=subprocess.STDOUT)
wd = "http://127.0.0.1:%d" % port


def call(method, path, body=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(wd + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())["value"]


failed, session = 0, None
try:
    for _ in range(100):
        try:
            call("GET", "/status", timeout=2); break
        except OSError:
            time.sleep(0.1)
    caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
        "binary": chrome, "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                   "--window-size=1400,1700", "--user-data-dir=" + profile]}}}}
    session = call("POST", "/session", caps)["sessionId"]
    S = "/session/" + session

    def js(script):
        return call("POST", S + "/execute/sync", {"script": script, "args": []})

    call("POST", S + "/url", {"url": url})
    probe = """const m = document.querySelector('#spec');
      return {nodes: [...document.querySelectorAll('#map g.node')].map(g => Number(g.dataset.node)),
              calls: document.querySelectorAll('#map ellipse.call').length,
              rows: document.querySelectorAll('#calls tbody tr').length,
              columns: Number(m.dataset.columns), live: document.querySelector('#live').dataset.state,
              truth: document.querySelectorAll('#map path.truth').length,
              tablerows: document.querySelectorAll('#nodes tbody tr').length,
              devices: document.querySelectorAll('#devlist a').length};"""
    t_end, st = time.time() + 90, {}
    while time.time() < t_end:
        st = js(probe)
        if st["live"] == "live" and st["nodes"] == nodes and st["calls"] >= 1 and st["columns"] > 0:
            break
        time.sleep(0.5)
    first = st.get("columns", 0)
    time.sleep(2)
    later = js(probe)
    checks = [
        (later["live"] == "live", "the live stream is up (%s)" % later["live"]),
        (sorted(later["nodes"]) == nodes, "every node on the map: %s of %s" % (later["nodes"], nodes)),
        (later["tablerows"] == len(nodes), "every node in the table (%d rows)" % later["tablerows"]),
        (later["calls"] >= 1, "located calls drawn: %d ellipses, %d rows" % (later["calls"], later["rows"])),
        (later["truth"] >= 1, "the simulation's sources drawn: %d" % later["truth"]),
        (first > 0 and later["columns"] > first, "the spectrogram updates: %d then %d columns" % (first, later["columns"])),
        (later["devices"] >= 1, "the device browser lists %d status devices" % later["devices"]),
    ]
    if bench is not None:
        t = js("""const n = performance.getEntriesByType('navigation')[0];
                  return {load: n.loadEventEnd - n.startTime, dom: n.domContentLoadedEventEnd - n.startTime,
                          hello: window.chorusStats.helloMs};""")
        print("page_load_ms %.1f" % t["load"]); print("page_dom_ms %.1f" % t["dom"]); print("page_live_ms %.1f" % t["hello"])
        sys.stdout.flush()
        time.sleep(bench)
        for c in js("return window.chorusStats.calls;"):
            print("call %d %d %d" % (c["reporter"], c["seq"], c["seen_ms"]))
    png = base64.b64decode(call("GET", S + "/screenshot"))
    with open(os.path.join(outdir, "web.png"), "wb") as f:
        f.write(png)
    checks.append((png[:8] == b"\x89PNG\r\n\x1a\n", "screenshot %s (%d bytes)" % (os.path.join(outdir, "web.png"), len(png))))
    for ok, what in checks:
        print(("ok   " if ok else "FAIL ") + what, file=sys.stderr if bench is not None else sys.stdout)
        failed += not ok
except Exception as e:  # a WebDriver error is a failure with its reason
    print("FAIL webdriver: %s" % e)
    failed += 1
finally:
    if session:
        try:
            call("DELETE", "/session/" + session, timeout=10)
        except Exception:
            pass
    proc.terminate(); proc.wait()
    shutil.rmtree(profile, ignore_errors=True)
sys.exit(1 if failed else 0)
