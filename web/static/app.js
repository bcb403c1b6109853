// chorus-web's page: plain JavaScript, no build step, no libraries.
// State comes from the JSON API and live updates from /api/events
// (server-sent events); docs/protocol.md "chorus-web" describes both.
"use strict";
const $ = (s) => document.querySelector(s);
const NS = "http://www.w3.org/2000/svg";
// What a test or bench reads back: when the live stream said hello, and
// when each call arrived (Date.now(), host realtime).
window.chorusStats = { helloMs: null, calls: [] };
const st = { nodes: new Map(), calls: new Map(), truth: null, specNode: null, es: null,
             offsetMs: 0, lastFrame: null, dets: [], selected: null, spec: null };

if (location.search.includes("token=")) history.replaceState(null, "", "/");

async function api(path) {
  const r = await fetch(path, { credentials: "same-origin" });
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || r.statusText);
  return j;
}
function el(tag, attrs, parent, ns) {
  const e = ns ? document.createElementNS(NS, tag) : document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
const fmt = (x, d) => (x === null || x === undefined || !isFinite(x)) ? "–" : Number(x).toFixed(d);
const serverNow = () => Date.now() + st.offsetMs;

// --- the map ---------------------------------------------------------------
let view = null; // world -> screen
function fitView() {
  const xs = [], ys = [];
  for (const n of st.nodes.values()) { xs.push(n.pos[0]); ys.push(n.pos[1]); }
  if (st.truth) for (const s of st.truth.sources || []) { xs.push(s.pos[0]); ys.push(s.pos[1]); }
  if (!xs.length) return;
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const span = Math.max(x1 - x0, y1 - y0, 1), m = 0.12 * span;
  const k = Math.min(600 / (x1 - x0 + 2 * m || 1), 460 / (y1 - y0 + 2 * m || 1));
  view = { k, x: (x) => (x - x0 + m) * k, y: (y) => (y1 + m - y) * k };
}
function drawMap() {
  const svg = $("#map");
  fitView();
  if (!view) return;
  svg.textContent = "";
  const gT = el("g", { id: "truthlayer" }, svg, true), gC = el("g", { id: "calllayer" }, svg, true),
        gN = el("g", { id: "nodelayer" }, svg, true);
  if (st.truth) for (const s of st.truth.sources || []) {
    const x = view.x(s.pos[0]), y = view.y(s.pos[1]);
    el("path", { class: "truth", d: `M${x - 6},${y - 6}L${x + 6},${y + 6}M${x - 6},${y + 6}L${x + 6},${y - 6}`,
                 "data-source": s.id }, gT, true);
  }
  for (const c of st.calls.values()) drawCall(c, gC);
  for (const n of st.nodes.values()) {
    const g = el("g", { class: "node state-" + n.state, "data-node": n.id, "data-state": n.state }, gN, true);
    el("circle", { cx: view.x(n.pos[0]), cy: view.y(n.pos[1]), r: 8 }, g, true);
    const t = el("text", { x: view.x(n.pos[0]) + 10, y: view.y(n.pos[1]) - 8 }, g, true);
    t.textContent = "node" + n.id;
  }
}
function drawCall(c, g) {
  if (!view || c.x === null || c.x === undefined || c.status === "failed") return;
  const age = (serverNow() - c.received_ms) / 1000, op = Math.max(0.12, 1 - age / 180);
  const cx = view.x(c.x), cy = view.y(c.y);
  const rx = Math.max(3, (c.ell95_major || 0) * view.k), ry = Math.max(3, (c.ell95_minor || 0) * view.k);
  const e = el("ellipse", { class: "call" + (st.selected === c.id ? " sel" : ""), cx, cy, rx, ry, "data-call": c.id,
                            transform: `rotate(${-(c.ell95_angle_deg || 0)} ${cx} ${cy})`, opacity: op }, g, true);
  el("title", {}, e, true).textContent = `call ${c.id}: ${c.status} (${fmt(c.x, 2)}, ${fmt(c.y, 2)}) m`;
  e.addEventListener("click", () => showCall(c.id));
  el("circle", { class: "callpt", cx, cy, r: 1.5, opacity: op }, g, true);
}
setInterval(drawMap, 5000); // fading

// --- nodes table and sync graph ---------------------------------------------
// The s.e. of the cheapest path from nodeN:cpu to global over the ticker's
// conversions (se_end added in quadrature; "exact" edges cost nothing).
function seToGlobal(n) {
  const adj = new Map(), add = (a, b, w) => { if (!adj.has(a)) adj.set(a, []); adj.get(a).push([b, w]); };
  for (const c of n.conversions || []) {
    const w = c.exact ? 0 : (c.se_ns || 0) ** 2;
    add(c.from, c.to, w); add(c.to, c.from, w);
  }
  const start = "node" + n.id + ":cpu", dist = new Map([[start, 0]]), todo = [start];
  while (todo.length) {
    todo.sort((a, b) => dist.get(a) - dist.get(b));
    const u = todo.shift();
    if (u === "global") return Math.sqrt(dist.get(u));
    for (const [v, w] of adj.get(u) || []) {
      const d = dist.get(u) + w;
      if (!dist.has(v) || d < dist.get(v)) { dist.set(v, d); todo.push(v); }
    }
  }
  return null;
}
function drawNodes() {
  const tb = $("#nodes tbody");
  tb.textContent = "";
  for (const n of [...st.nodes.values()].sort((a, b) => a.id - b.id)) {
    const tr = el("tr", { class: n.state, "data-node": n.id }, tb);
    el("td", {}, tr).textContent = "node" + n.id;
    el("td", {}, tr).textContent = n.state;
    const sv = el("td", {}, tr);
    for (const k in n.services || {}) el("span", { class: "svc" + (n.services[k] ? "" : " off") }, sv).textContent = k;
    el("td", {}, tr).textContent = n.xruns ?? "–";
    el("td", {}, tr).textContent = n.tstamp ?? "–";
    el("td", {}, tr).textContent = n.root !== undefined ? "node" + n.root : "–";
    const se = seToGlobal(n);
    el("td", {}, tr).textContent = se === null ? "no path" : fmt(se / 1000, 2) + " µs";
    el("td", { class: "fits", title: "RBS fits: peer, kind, rms (µs)" }, tr).textContent = (n.peers || []).map((p) => `${p.node}:${fmt(p.rms_ns / 1000, 1)}`).join(" ");
  }
  drawGraph();
}
function seColour(se) { // green (≤ 0.3 µs) to red (≥ 30 µs), log scale
  const t = Math.min(1, Math.max(0, (Math.log10(Math.max(se, 1)) - 2.5) / 2));
  return `hsl(${Math.round(120 * (1 - t))},70%,40%)`;
}
function drawGraph() {
  const svg = $("#graph"), n = st.nodes.get(Number($("#graphnode").value));
  svg.textContent = "";
  if (!n) return;
  const names = new Set();
  for (const c of n.conversions || []) { names.add(c.from); names.add(c.to); }
  const list = [...names].sort(), pos = new Map();
  list.forEach((name, i) => {
    const a = (2 * Math.PI * i) / list.length;
    pos.set(name, [300 + 230 * Math.cos(a), 130 + 105 * Math.sin(a)]);
  });
  for (const c of n.conversions || []) {
    const [x1, y1] = pos.get(c.from), [x2, y2] = pos.get(c.to);
    const l = el("line", { x1, y1, x2, y2, stroke: c.exact ? "#555" : seColour(c.se_ns || 0), "stroke-width": 2,
                           class: "edge" }, svg, true);
    el("title", {}, l, true).textContent = `${c.from} → ${c.to}: se ${fmt((c.se_ns || 0) / 1000, 2)} µs, n=${c.n ?? "–"}, age ${fmt(c.age_s, 1)} s`;
  }
  for (const [name, [x, y]] of pos) {
    el("circle", { cx: x, cy: y, r: 4, fill: "#333" }, svg, true);
    el("text", { x: x + 5, y: y - 4, "font-size": 10 }, svg, true).textContent = name;
  }
}

// --- calls --------------------------------------------------------------------
function addCall(c) {
  // A later answer of its reporter to the same call replaces the first
  // (collab's "supersedes": a call answered untested, completed since).
  if (c.supersedes !== undefined)
    for (const [id, o] of st.calls)
      if (o.reporter === c.reporter && o.seq === c.supersedes) st.calls.delete(id);
  st.calls.set(c.id, c);
  if (st.calls.size > 300) st.calls.delete(st.calls.keys().next().value);
}
function drawCalls() {
  const tb = $("#calls tbody");
  tb.textContent = "";
  for (const c of [...st.calls.values()].reverse().slice(0, 40)) {
    const tr = el("tr", { "data-call": c.id }, tb);
    el("td", {}, tr).textContent = c.id;
    el("td", {}, tr).textContent = c.status;
    el("td", {}, tr).textContent = `${fmt(c.x, 2)}, ${fmt(c.y, 2)}`;
    el("td", {}, tr).textContent = `${fmt(c.ell95_major, 3)} × ${fmt(c.ell95_minor, 3)}`;
    el("td", {}, tr).textContent = "node" + c.reporter;
    el("td", {}, tr).textContent = (c.nodes || []).join(" ");
    el("td", {}, tr).textContent = fmt(c.latency_s, 2) + " s";
    tr.addEventListener("click", () => showCall(c.id));
  }
  $("#counts").textContent = `${st.nodes.size} nodes · ${st.calls.size} calls`;
}
async function showCall(id) {
  st.selected = id;
  drawMap();
  const box = $("#callinfo");
  box.textContent = "loading…";
  try {
    const j = await api("/api/call?id=" + id);
    box.textContent = "";
    const c = j.call;
    el("p", {}, box).textContent = `call ${id}: ${c.status} at (${fmt(c.x, 3)}, ${fmt(c.y, 3)}) m, ` +
      `global ${c.t_global_ns} ns ± ${fmt(c.t_se_ns / 1000, 1)} µs; clips ${j.from_ns} … ${j.to_ns} ns (global)`;
    for (const clip of j.clips) {
      const d = el("div", {}, box);
      d.append("node" + clip.node + " ");
      el("audio", { controls: "", preload: "none", src: clip.url }, d);
      const a = el("a", { href: clip.url, download: `call${id}-node${clip.node}.wav` }, d);
      a.textContent = " download WAV";
    }
  } catch (e) { box.innerHTML = ""; el("span", { class: "err" }, box).textContent = e.message; }
}

// --- spectrogram --------------------------------------------------------------
function colour(v) { // dark blue .. yellow
  const t = v / 255;
  return [Math.round(255 * Math.min(1, Math.max(0, 1.6 * t - 0.5))), Math.round(255 * Math.min(1, 1.4 * t)),
          Math.round(255 * Math.max(0, 0.55 - Math.abs(t - 0.35)) * 1.6)];
}
function specColumns(b) {
  const cv = $("#spec"), ctx = cv.getContext("2d"), W = cv.width, H = cv.height;
  if (!b.columns || b.node !== st.specNode) return;
  const raw = atob(b.data), n = Math.min(b.columns, W);
  const img = ctx.getImageData(n, 0, W - n, H);
  ctx.putImageData(img, 0, 0);
  const col = ctx.createImageData(n, H);
  for (let c = 0; c < n; c++) {
    const off = (b.columns - n + c) * b.bins;
    for (let k = 0; k < H; k++) {
      const [r, g, bl] = colour(raw.charCodeAt(off + Math.min(b.bins - 1, k)));
      const p = 4 * ((H - 1 - k) * n + c);
      col.data[p] = r; col.data[p + 1] = g; col.data[p + 2] = bl; col.data[p + 3] = 255;
    }
  }
  ctx.putImageData(col, W - n, 0);
  st.lastFrame = b.first_frame + (b.columns - 1) * b.hop;
  st.spec = b;
  $("#nyq").textContent = fmt(b.rate / 2000, 0);
  cv.dataset.columns = Number(cv.dataset.columns) + b.columns;
  cv.dataset.lastFrame = st.lastFrame;
  drawMarks();
}
function drawMarks() {
  const cv = $("#specmarks"), ctx = cv.getContext("2d"), W = cv.width;
  ctx.clearRect(0, 0, W, cv.height);
  if (st.lastFrame === null || !st.spec) return;
  let shown = 0;
  for (const d of st.dets) {
    if (d.node !== st.specNode || d.dev) continue;
    const x = W - 1 - (st.lastFrame - d.onset_frame) / st.spec.hop;
    if (x < 0 || x >= W) continue;
    const w = Math.max(2, (d.duration_s || 0) * st.spec.rate / st.spec.hop);
    const y0 = 128 - (d.f_hi || 0) / (st.spec.rate / 2) * 128, y1 = 128 - (d.f_lo || 0) / (st.spec.rate / 2) * 128;
    ctx.strokeStyle = "#ff3b3b"; ctx.lineWidth = 1.5;
    ctx.strokeRect(x, y0, w, Math.max(2, y1 - y0));
    ctx.fillStyle = "#ff3b3b"; ctx.fillText("▼", x - 3, 10);
    shown++;
  }
  cv.dataset.detections = shown;
}

// --- live ---------------------------------------------------------------------
function connect() {
  if (st.es) st.es.close();
  const es = new EventSource("/api/events" + (st.specNode !== null ? "?spec=" + st.specNode : ""));
  st.es = es;
  $("#spec").dataset.columns = 0;
  es.addEventListener("hello", (ev) => {
    const h = JSON.parse(ev.data);
    st.offsetMs = h.now_ms - Date.now();
    if (window.chorusStats.helloMs === null) window.chorusStats.helloMs = performance.now();
    for (const n of h.nodes) st.nodes.set(n.id, n);
    $("#live").dataset.state = "live"; $("#live").textContent = "live";
    drawMap(); drawNodes();
  });
  es.addEventListener("node", (ev) => { const n = JSON.parse(ev.data); st.nodes.set(n.id, n); drawMap(); drawNodes(); });
  es.addEventListener("call", (ev) => {
    const c = JSON.parse(ev.data);
    c.seen_ms = Date.now();
    window.chorusStats.calls.push({ id: c.id, reporter: c.reporter, seq: c.seq, seen_ms: c.seen_ms });
    addCall(c); drawMap(); drawCalls();
    document.body.dataset.lastCall = c.id;
    document.body.dataset.lastCallSeenMs = c.seen_ms;
  });
  es.addEventListener("det", (ev) => {
    st.dets.push(JSON.parse(ev.data));
    if (st.dets.length > 400) st.dets.shift();
    drawMarks();
  });
  es.addEventListener("spec", (ev) => specColumns(JSON.parse(ev.data)));
  es.addEventListener("lag", () => loadState());
  es.onerror = () => { $("#live").dataset.state = "lost"; $("#live").textContent = "reconnecting"; };
}
async function loadState() {
  const [nodes, calls, truth] = await Promise.all([api("/api/nodes"), api("/api/calls"), api("/api/truth").catch(() => null)]);
  for (const n of nodes) st.nodes.set(n.id, n);
  for (const c of calls) addCall(c);
  st.truth = truth;
  if (truth) $("#truthnote").textContent = ", simulation truth ✕";
  drawMap(); drawNodes(); drawCalls();
}
function fillSelects() {
  const ids = [...st.nodes.keys()].sort((a, b) => a - b);
  for (const s of ["#specnode", "#graphnode", "#dlnode", "#devnode"]) {
    const sel = $(s); sel.textContent = "";
    for (const id of ids) el("option", { value: id }, sel).textContent = "node" + id;
  }
}

// --- download and device browser ----------------------------------------------
$("#dllast").addEventListener("click", () => {
  const d = [...st.dets].reverse().find((x) => x.global_ns);
  if (!d) { $("#dlmsg").textContent = "no global time seen yet"; return; }
  $("#dlto").value = d.global_ns + 1e9; $("#dlfrom").value = d.global_ns - 4e9;
});
$("#dl").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const q = `/api/audio?node=${$("#dlnode").value}&from=${encodeURIComponent($("#dlfrom").value)}&to=${encodeURIComponent($("#dlto").value)}`;
  const r = await fetch(q);
  if (!r.ok) { $("#dlmsg").textContent = (await r.json()).error; return; }
  const url = URL.createObjectURL(await r.blob()), a = el("a", { href: url, download: `node${$("#dlnode").value}.wav` });
  a.click();
  $("#dlmsg").textContent = `first frame at global ${r.headers.get("X-Chorus-T0-Global-Ns")} ns ± ${r.headers.get("X-Chorus-T0-Se-Ns")}`;
});
async function listDevices() {
  const ul = $("#devlist"); ul.textContent = "listing…";
  try {
    const j = await api("/api/devices?node=" + $("#devnode").value);
    ul.textContent = "";
    for (const d of j.devices) {
      const li = el("li", {}, ul);
      if (d.pattern === "status") {
        const a = el("a", { "data-device": d.name }, li); a.textContent = d.name;
        a.addEventListener("click", () => readDevice(d.name));
      } else li.textContent = `${d.name} (${d.pattern || d.error})`;
    }
  } catch (e) { ul.textContent = e.message; }
}
async function readDevice(name) {
  try { $("#devtext").textContent = (await api(`/api/device?node=${$("#devnode").value}&name=${encodeURIComponent(name)}`)).text; }
  catch (e) { $("#devtext").textContent = e.message; }
}
$("#devnode").addEventListener("change", listDevices);
$("#graphnode").addEventListener("change", drawGraph);
$("#specnode").addEventListener("change", () => {
  st.specNode = Number($("#specnode").value);
  const cv = $("#spec"); cv.getContext("2d").clearRect(0, 0, cv.width, cv.height);
  connect();
});

(async function start() {
  try {
    await loadState();
    fillSelects();
    st.specNode = Number($("#specnode").value);
    connect();
    listDevices();
  } catch (e) {
    $("#live").dataset.state = "lost"; $("#live").textContent = e.message;
  }
})();
