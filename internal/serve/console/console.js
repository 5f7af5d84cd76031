// tierbench console: the runs, a running experiment live, a quick TPC-C
// or TPC-H run, the bundled scenarios and the queue, from serve's /api/v1. Plain
// DOM, no framework, no network loads. Every string from the API reaches
// the page as text (textContent, createTextNode), never as HTML.
"use strict";

// ---- helpers ---------------------------------------------------------

const $ = (id) => document.getElementById(id);

// el makes an element: attrs are properties (className, type, …) or, for
// names with a dash, attributes; children are nodes or strings (as text).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.includes("-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function fmt(v, digits) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  return Number(v).toLocaleString("en-US", { maximumFractionDigits: digits || 0, minimumFractionDigits: digits || 0 });
}

function fmtTime(s) {
  if (!s) return "";
  const d = new Date(s);
  return Number.isNaN(d.getTime()) || d.getFullYear() < 2000 ? "" : d.toLocaleString();
}

function fmtDuration(from, to) {
  const a = Date.parse(from), b = Date.parse(to);
  if (Number.isNaN(a) || Number.isNaN(b) || b < a || new Date(b).getFullYear() < 2000) return "";
  let s = Math.round((b - a) / 1000);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  s %= 60;
  return (h ? h + "h" : "") + (h || m ? m + "m" : "") + s + "s";
}

function banner(msg) { $("banner").textContent = msg || ""; }

// ---- the API and its token ----------------------------------------------

const tokenKey = "tierbench-token";
let tokenAsked = null; // the pending question, shared by every 401

function authHeaders() {
  const t = sessionStorage.getItem(tokenKey);
  return t ? { Authorization: "Bearer " + t } : {};
}

// askToken shows the token dialog once, however many requests were refused.
function askToken(refused) {
  if (!tokenAsked) {
    tokenAsked = new Promise((resolve) => {
      const d = $("token-dialog");
      $("token-why").textContent = refused
        ? "The token was refused; give this serve's token (serve --token-file)."
        : "This serve needs its token (serve --token-file).";
      $("token-input").value = "";
      const done = () => {
        const t = $("token-input").value.trim();
        if (!t) return;
        sessionStorage.setItem(tokenKey, t);
        d.close();
        tokenAsked = null;
        resolve();
      };
      $("token-form").onsubmit = (ev) => { ev.preventDefault(); done(); };
      d.oncancel = (ev) => ev.preventDefault(); // nothing works without it
      d.showModal();
      $("token-input").focus();
    });
  }
  return tokenAsked;
}

// api fetches path with the token, asking for it on a 401, and returns
// {status, body}: body is the parsed JSON, or the text when not JSON.
async function api(path, opts) {
  opts = opts || {};
  for (;;) {
    const headers = Object.assign({}, opts.headers, authHeaders());
    const init = { method: opts.method || "GET", headers };
    if (opts.json !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(opts.json);
    }
    const sent = sessionStorage.getItem(tokenKey);
    const res = await fetch(path, init);
    if (res.status === 401) {
      // A request sent before the token was given comes back refused
      // after it: try again with it rather than ask a second time.
      if (sessionStorage.getItem(tokenKey) === sent) await askToken(Boolean(sent));
      continue;
    }
    const text = await res.text();
    let body = text;
    if ((res.headers.get("Content-Type") || "").includes("json")) {
      try { body = JSON.parse(text); } catch (e) { /* keep the text */ }
    }
    return { status: res.status, body };
  }
}

function errorText(r) {
  if (r.body && typeof r.body === "object" && r.body.error) return r.body.error;
  return "HTTP " + r.status + (typeof r.body === "string" && r.body ? ": " + r.body.trim() : "");
}

// ---- Server-Sent Events over fetch (EventSource sends no header) -------

// follow reads an event stream, calling onEvent(name, data) for each event
// until done; it reconnects after an error from the last id it saw.
async function follow(path, onEvent, stop) {
  let last = 0;
  for (let attempt = 0; !stop.stopped; attempt++) {
    try {
      const url = path + (last ? "?last_event_id=" + last : "");
      const sent = sessionStorage.getItem(tokenKey);
      const res = await fetch(url, { headers: authHeaders(), signal: stop.signal });
      if (res.status === 401) {
        if (sessionStorage.getItem(tokenKey) === sent) await askToken(true);
        continue;
      }
      if (!res.ok) { onEvent("note", { msg: "event stream: HTTP " + res.status }); return; }
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const ev = parseEvent(buf.slice(0, cut));
          buf = buf.slice(cut + 2);
          if (!ev) continue;
          if (ev.id) last = ev.id;
          onEvent(ev.name, ev.data);
          if (ev.name === "done") return;
        }
      }
    } catch (e) {
      if (stop.stopped) return;
    }
    await new Promise((r) => setTimeout(r, Math.min(1000 * (attempt + 1), 5000)));
  }
}

// parseEvent reads one SSE block; comments (keep-alives) give null.
function parseEvent(block) {
  let name = "message", data = "", id = 0, any = false;
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
    if (field === "event") name = value;
    else if (field === "data") { data += (any ? "\n" : "") + value; any = true; }
    else if (field === "id") id = Number(value) || 0;
  }
  if (!any) return null;
  try { return { name, id, data: JSON.parse(data) }; } catch (e) { return { name, id, data: {} }; }
}

// ---- charts: inline SVG polylines ------------------------------------

const svgNS = "http://www.w3.org/2000/svg";
const chartW = 460, chartH = 150, pad = { l: 48, r: 8, t: 8, b: 20 };

function svg(tag, attrs) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

// A chart is a figure with a title, a legend and an svg redrawn from its
// series: {label: [[t, v], …]} on a time axis shared by all charts.
class Chart {
  constructor(id, title, unit, empty) {
    this.id = id;
    this.empty = empty || "no data yet";
    this.series = new Map();
    this.svg = svg("svg", { viewBox: `0 0 ${chartW} ${chartH}`, role: "img", "aria-label": title });
    this.legend = el("span", { className: "legend" });
    this.fig = el("figure", { className: "chart", id: "chart-" + id },
      el("figcaption", {}, title + (unit ? " (" + unit + ")" : ""), " ", this.legend), this.svg);
  }

  add(label, t, v) {
    if (v === null || v === undefined || Number.isNaN(v)) return;
    if (!this.series.has(label)) this.series.set(label, []);
    this.series.get(label).push([t, v]);
  }

  draw(t0, t1) {
    const s = this.svg;
    s.replaceChildren();
    let max = 0;
    for (const pts of this.series.values()) for (const p of pts) max = Math.max(max, p[1]);
    max = niceMax(max);
    const w = chartW - pad.l - pad.r, h = chartH - pad.t - pad.b;
    const x = (t) => pad.l + (t1 > t0 ? ((t - t0) / (t1 - t0)) * w : w);
    const y = valueAxis(s, max, 1);
    const span = svg("text", { x: pad.l + w, y: chartH - 4, "text-anchor": "end" });
    span.textContent = Math.round(t1 - t0) + " s";
    s.append(span);
    this.legend.replaceChildren();
    if (this.series.size === 0) {
      const none = svg("text", { x: pad.l + w / 2, y: pad.t + h / 2, "text-anchor": "middle", class: "none" });
      none.textContent = this.empty;
      s.append(none);
    }
    let i = 0;
    for (const [label, pts] of this.series) {
      const cls = "s" + (i++ % 6);
      s.append(svg("polyline", { class: cls, points: pts.map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" ") }));
      this.legend.append(el("span", { className: "key " + cls }, label));
    }
  }
}

// QueryBars is a TPC-H run's query times as they come: a bar for each
// query of the latest power test and, beside it, the mean over the
// throughput test's streams that ran it. A bar's tooltip gives its
// seconds, its status and the read MB/s it drove; a query that did not
// answer right (timed out, failed, wrong) is drawn in the error colour.
// A chart is one run's: a scenario's next TPC-H run gets its own, named by
// the run's label, so that tiers' and engines' queries never mix.
const tpchNames = [...Array.from({ length: 22 }, (_, i) => "Q" + (i + 1)), "RF1", "RF2"];

class QueryBars {
  constructor(run, label) {
    this.run = run || "";
    this.rep = 0;
    this.power = new Map(); // name -> the latest power test's result
    this.thr = new Map(); // name -> {sum, n, bad}: the throughput test's streams
    this.svg = svg("svg", { viewBox: `0 0 ${chartW} ${chartH}`, role: "img", "aria-label": "TPC-H query times" });
    this.legend = el("span", { className: "legend" });
    this.caption = el("span", { className: "geomean" });
    this.fig = el("figure", { className: "chart", id: "chart-tpch" },
      el("figcaption", {}, "TPC-H query times (s)" + (label ? " of " + label : ""), " ", this.caption, " ", this.legend), this.svg);
  }

  add(q) {
    const name = q.refresh || "Q" + q.query;
    if (q.test === "power") {
      if (q.rep !== this.rep) { this.rep = q.rep; this.power.clear(); }
      this.power.set(name, q);
      return;
    }
    const t = this.thr.get(name) || { sum: 0, n: 0, bad: false };
    t.sum += q.seconds;
    t.n++;
    t.bad = t.bad || q.status !== "ok";
    this.thr.set(name, t);
  }

  // geomean is the geometric mean of the power test's query times so far
  // (the 22 queries, not the refresh functions), and how many it covers.
  geomean() {
    let logs = 0, n = 0;
    for (const [name, q] of this.power) {
      if (name.startsWith("Q") && q.status === "ok" && q.seconds > 0) { logs += Math.log(q.seconds); n++; }
    }
    return n ? [Math.exp(logs / n), n] : [0, 0];
  }

  draw() {
    const s = this.svg;
    s.replaceChildren();
    const names = tpchNames.filter((n) => this.power.has(n) || this.thr.has(n));
    let max = 0;
    for (const q of this.power.values()) max = Math.max(max, q.seconds);
    for (const t of this.thr.values()) max = Math.max(max, t.sum / t.n);
    max = niceMax(max);
    const w = chartW - pad.l - pad.r, h = chartH - pad.t - pad.b;
    const y = valueAxis(s, max, 2);
    const [gm, n] = this.geomean();
    this.caption.textContent = n ? "power test " + this.rep + ": geometric mean " + fmt(gm, 3) + " s over " + n + (n === 1 ? " query" : " queries") : "";
    this.legend.replaceChildren();
    if (names.length === 0) {
      const none = svg("text", { x: pad.l + w / 2, y: pad.t + h / 2, "text-anchor": "middle", class: "none" });
      none.textContent = "no query done yet";
      s.append(none);
      return;
    }
    if (this.power.size) this.legend.append(el("span", { className: "key s0" }, "power " + this.rep));
    if (this.thr.size) this.legend.append(el("span", { className: "key s1" }, "throughput, mean of the streams"));
    const slot = w / names.length, bw = Math.max(1, (slot - 2) / 2);
    names.forEach((name, i) => {
      const x0 = pad.l + i * slot + 1;
      const bar = (k, v, cls, tip) => {
        const r = svg("rect", { x: (x0 + k * bw).toFixed(1), y: y(v).toFixed(1), width: bw.toFixed(1),
          height: Math.max(0.5, pad.t + h - y(v)).toFixed(1), class: cls, "data-query": name });
        const title = svg("title", {});
        title.textContent = tip;
        r.append(title);
        s.append(r);
      };
      const q = this.power.get(name);
      if (q) {
        bar(0, q.seconds, "s0" + (q.status === "ok" ? "" : " bad"), "power " + this.rep + " " + name + ": " + fmt(q.seconds, 3) + " s, " +
          q.status + (q.read_mbps ? ", " + fmt(q.read_mbps, 1) + " MB/s read" : ""));
      }
      const t = this.thr.get(name);
      if (t) bar(1, t.sum / t.n, "s1" + (t.bad ? " bad" : ""), "throughput " + name + ": " + fmt(t.sum / t.n, 3) + " s on average over " + t.n + " streams");
      if (names.length <= 12 || i % 2 === 0) {
        const lab = svg("text", { x: (x0 + slot / 2).toFixed(1), y: chartH - 6, "text-anchor": "middle" });
        lab.textContent = name;
        s.append(lab);
      }
    });
  }
}

// valueAxis draws a chart's grid lines at 0, half and all of max, labelled
// with digits decimals below 10, and returns the value-to-y mapping.
function valueAxis(s, max, digits) {
  const w = chartW - pad.l - pad.r, h = chartH - pad.t - pad.b;
  const y = (v) => pad.t + h - (v / max) * h;
  for (const f of [0, 0.5, 1]) {
    const yy = y(max * f);
    s.append(svg("line", { x1: pad.l, x2: pad.l + w, y1: yy, y2: yy, class: "grid" }));
    const lab = svg("text", { x: pad.l - 4, y: yy + 4, "text-anchor": "end" });
    lab.textContent = fmt(max * f, max < 10 ? digits : 0);
    s.append(lab);
  }
  return y;
}

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

// ---- live: one run or scenario followed ------------------------------

const live = { stop: null, charts: null, t0: null, t1: null, telT: null, id: "", path: "", runID: "", drawPending: false };

// The TPC-C charts, made afresh.
const tpccChartsNew = () => ({ tpm: new Chart("tpm", "TPM and NOPM", "per minute"), lat: new Chart("latency", "New-Order latency", "ms") });

function liveCharts() {
  const c = {
    ...tpccChartsNew(),
    iops: new Chart("iops", "Target device IOPS", "r+w per s"),
    await: new Chart("await", "Target device await", "ms"),
    cpu: new Chart("cpu", "CPU split", "%"),
    hosts: new Chart("hosts", "Hosts' CPU busy", "%", "no node_exporter hosts"),
  };
  $("live-charts").replaceChildren(...Object.values(c).map((ch) => ch.fig));
  return c;
}

// tpccCharts puts the TPC-C charts back first among the live charts when
// a run before (TPC-H, disk, backup) took them away.
function tpccCharts() {
  const c = live.charts;
  if (c.tpm) return;
  Object.assign(c, tpccChartsNew());
  $("live-charts").prepend(c.tpm.fig, c.lat.fig);
}

// dropTPCCCharts takes the TPC-C charts away while they are empty: a run of
// another kind has nothing to draw there.
function dropTPCCCharts() {
  const c = live.charts;
  for (const k of ["tpm", "lat"]) {
    if (c[k] && c[k].series.size === 0) { c[k].fig.remove(); delete c[k]; }
  }
}

// The kinds of run that send no TPC-C ticks.
const noTPCC = ["tpch", "disk", "backup", "space", "monitor"];

// watch follows a run's (kind "run") or a scenario's event stream.
function watch(kind, id) {
  if (live.stop) { live.stop.stopped = true; live.stop.ctl.abort(); }
  const ctl = new AbortController();
  const stop = { stopped: false, ctl, signal: ctl.signal };
  Object.assign(live, { stop, charts: liveCharts(), t0: null, t1: null, telT: null, id, runID: kind === "run" ? id : "",
    path: (kind === "run" ? "/api/v1/runs/" : "/api/v1/scenarios/") + encodeURIComponent(id) });
  for (const f of ["step", "phase", "vus", "tpm", "nopm", "offered", "p95", "p99", "iops", "await", "cpu", "hosts"]) $("live-" + f).textContent = "–";
  $("live-what").textContent = (kind === "run" ? "Run " : "Scenario ") + id;
  $("live-status").textContent = "waiting";
  $("live-notes").replaceChildren();
  $("live-cancel").hidden = false;
  $("live-report").hidden = true;
  location.hash = "#live";
  follow(live.path + "/events", (name, data) => onLiveEvent(stop, name, data), stop);
}

function onLiveEvent(stop, name, d) {
  if (stop.stopped) return;
  switch (name) {
    case "tick": return onTick(d);
    case "progress":
      if (d.telemetry) onSample(d.telemetry);
      if (d.started) {
        if (d.started.run_id) live.runID = d.started.run_id;
        if (d.started.kind === "tpch") tpchCharts(d.started.run_id, d.started.params && d.started.params.label);
        else if (noTPCC.includes(d.started.kind)) dropTPCCCharts();
        note("started " + (d.started.kind || "") + " run " + (d.started.run_id || ""));
      } else if (d.point) {
        $("live-step").textContent = "point " + (d.point.index + 1) + " of " + d.point.count;
        $("live-phase").textContent = d.point.name || "";
        note("point " + (d.point.index + 1) + " of " + d.point.count + ": " + (d.point.name || ""));
      } else if (d.scenario_step) note("scenario step " + d.scenario_step.step + " of " + d.scenario_step.steps + ": " + d.scenario_step.kind);
      else if (d.cycle) {
        $("live-step").textContent = "cycle " + d.cycle.cycle + " of " + d.cycle.cycles;
        $("live-phase").textContent = "TPC-C " + fmt(d.cycle.elapsed_s) + " s, " + fmt(d.cycle.acknowledged) + " New-Orders acknowledged";
      } else if (d.phase) {
        $("live-step").textContent = "cycle " + d.phase.cycle + " of " + d.phase.cycles;
        $("live-phase").textContent = d.phase.phase + " " + fmt(d.phase.elapsed_s) + " s";
      }
      $("live-status").textContent = "running";
      return;
    case "result":
      if (d.tpcc) note(stepNote(d.tpcc));
      else if (d.point) note(pointNote(d.point));
      else if (d.phase) note(phaseNote(d.phase));
      else if (d.tpch) onQuery(d.tpch);
      else if (d.cycle) onCycle(d.cycle);
      for (const n of d.notes || []) note(n);
      return;
    case "note": return note(d.msg || "");
    case "done": return onDone(d);
  }
}

// stepNote is a TPC-C step's result as a note: its NOPM and TPM, and
// whether Ctrl-C (or a cancel) or the server's loss cut it short (the
// result's notes, which follow, say what that and a reset of its counters
// mean).
function stepNote(s) {
  let text = "step result: NOPM " + fmt(s.nopm) + ", TPM " + fmt(s.tpm);
  if (s.interrupted) text += ", cut short " + (s.server_lost ? "by the server's loss " : "") + "after " + fmt(s.measured_seconds, 1) + " s";
  return text;
}

// pointNote is a disk point's result as a note: each direction's IOPS,
// MB/s and p99, as `disk run` prints them.
function pointNote(p) {
  const dir = (name, d) => d ? name + " " + fmt(d.iops) + " IOPS, " + fmt(d.mbps, 1) + " MB/s, p99 " + fmt(d.p99_ms, 3) + " ms" : "";
  const parts = [dir("read", p.read), dir("write", p.write)].filter((x) => x);
  return "point " + p.name + (p.interrupted ? " (cut short)" : "") + ": " + parts.join("; ");
}

// phaseNote is a backup or restore phase's result as a note.
function phaseNote(m) {
  return "cycle " + m.cycle + " " + m.phase + " (" + m.method + "): " + fmt(m.seconds, 2) + " s, " + fmt(m.mbps, 1) + " MB/s" +
    (m.phase === "restore" ? (m.verified ? ", verified" : ", not verified") : "");
}

// onCycle notes a durability cycle's verdict: what was acknowledged and
// found again, the recovery, and why it failed if it did.
function onCycle(c) {
  note("cycle " + c.cycle + ": " + fmt(c.acknowledged) + " New-Orders acknowledged, " + fmt(c.found) + " found, " + fmt(c.lost) +
    " lost; recovered in " + fmt(c.recovery_seconds, 2) + " s; " + (c.ok ? "ok" : "FAILED: " + (c.problems || []).join("; ")));
}

// tpchName names a TPC-H query's result as the store names its step:
// "power 1 Q14", "throughput 2 Q3", "power 1 RF1".
function tpchName(q) {
  return q.test + " " + (q.test === "power" ? q.rep : q.stream) + " " + (q.refresh || "Q" + q.query);
}

// tpchCharts gives a TPC-H run the query bars in place of the TPC-C
// charts that have nothing to show (a scenario's earlier TPC-C runs keep
// theirs). A run other than the one charted (run "" is whichever is
// charted) gets a chart of its own above it; the earlier keep theirs,
// under ids of their run.
function tpchCharts(run, label) {
  const c = live.charts;
  if (c.tpch && (!run || c.tpch.run === run || !c.tpch.run)) {
    if (run && !c.tpch.run) c.tpch.run = run;
    return;
  }
  dropTPCCCharts();
  if (c.tpch) {
    c.tpch.fig.id = "chart-tpch-" + c.tpch.run;
    c["tpch:" + c.tpch.run] = c.tpch;
  }
  c.tpch = new QueryBars(run, label);
  $("live-charts").prepend(c.tpch.fig);
}

// onQuery shows a TPC-H query's (or refresh function's) result: a note, the
// step and test in the figures, its bar.
function onQuery(q) {
  note(tpchName(q) + ": " + q.status + ", " + fmt(q.seconds, 3) + " s, " + fmt(q.rows) + " rows" + (q.error ? ": " + q.error : ""));
  $("live-step").textContent = tpchName(q);
  $("live-phase").textContent = q.test;
  tpchCharts();
  live.charts.tpch.add(q);
  redraw();
}

function note(msg) {
  const list = $("live-notes");
  list.append(el("li", {}, msg));
  while (list.children.length > 50) list.firstChild.remove();
}

// atTime puts t (seconds) on the live charts' time axis.
function atTime(t) {
  if (live.t0 === null) live.t0 = t;
  live.t1 = Math.max(live.t1 || t, t);
}

function onTick(d) {
  $("live-status").textContent = "running";
  const t = Date.parse(d.t) / 1000;
  if (Number.isNaN(t)) return;
  atTime(t);
  const x = d.tpcc, tel = d.telemetry;
  if (x) {
    tpccCharts();
    const c = live.charts;
    $("live-step").textContent = x.step + " / " + x.steps;
    $("live-phase").textContent = x.phase;
    $("live-vus").textContent = String(x.vus);
    $("live-tpm").textContent = fmt(x.tpm);
    $("live-nopm").textContent = fmt(x.nopm);
    $("live-p95").textContent = fmt(x.new_order_p95_ms, 1);
    $("live-p99").textContent = fmt(x.new_order_p99_ms, 1);
    c.tpm.add("TPM", t, x.tpm);
    c.tpm.add("NOPM", t, x.nopm);
    if (x.offered_tpm) { // an open loop's step: what it offered, and how it keeps up
      $("live-offered").textContent = fmt(x.offered_tpm) + " · " + fmt(x.late) + " late · " + fmt(x.queue) + " waiting";
      c.tpm.add("offered", t, x.offered_tpm);
    } else $("live-offered").textContent = "closed loop";
    c.lat.add("p95", t, x.new_order_p95_ms);
    c.lat.add("p99", t, x.new_order_p99_ms);
  }
  if (tel) onSample(tel);
  redraw();
}

// onSample draws a telemetry sample, at its own time, once: a TPC-C tick
// brings the latest, and a progress event each as it is taken (a disk
// point's, a backup phase's).
function onSample(tel) {
  const t = Date.parse(tel.t) / 1000;
  if (Number.isNaN(t) || (live.telT !== null && t <= live.telT)) return;
  live.telT = t;
  atTime(t);
  tickTelemetry(t, tel);
  redraw();
}

// redraw draws every live chart at the next frame, once however many
// events came before it.
function redraw() {
  if (live.drawPending) return;
  live.drawPending = true;
  requestAnimationFrame(() => {
    live.drawPending = false;
    for (const ch of Object.values(live.charts)) ch.draw(live.t0, live.t1);
  });
}

function tickTelemetry(t, tel) {
  const c = live.charts;
  if (tel.device) {
    const dv = tel.device, iops = (dv.r_iops || 0) + (dv.w_iops || 0);
    $("live-iops").textContent = fmt(iops);
    $("live-await").textContent = fmt(dv.r_await_ms, 2) + " / " + fmt(dv.w_await_ms, 2);
    c.iops.add("IOPS", t, iops);
    c.await.add("read", t, dv.r_await_ms);
    c.await.add("write", t, dv.w_await_ms);
  }
  if (tel.cpu_split) {
    const s = tel.cpu_split;
    $("live-cpu").textContent = fmt(s.workload_pct, 1) + " / " + fmt(s.kernel_pct, 1) + " / " + fmt(s.other_pct, 1);
    c.cpu.add("workload", t, s.workload_pct);
    c.cpu.add("kernel", t, s.kernel_pct);
    c.cpu.add("other", t, s.other_pct);
  } else if (tel.cpu) {
    const busy = 100 - (tel.cpu.cpu_idle_pct || 0);
    $("live-cpu").textContent = "busy " + fmt(busy, 1);
    c.cpu.add("busy", t, busy);
  }
  if (tel.hosts && tel.hosts.length) {
    const parts = [];
    for (const h of tel.hosts) {
      if (!h.up || !h.cpu) { parts.push(h.host + ": down"); continue; }
      const busy = 100 - (h.cpu.cpu_idle_pct || 0);
      parts.push(h.host + ": " + fmt(busy, 1));
      c.hosts.add(h.host, t, busy);
    }
    $("live-hosts").textContent = parts.join(", ");
  }
}

function onDone(d) {
  $("live-status").textContent = (d.status || "done") + (d.outcome && d.outcome !== d.status ? " (" + d.outcome + ")" : "");
  if (d.error) note("error: " + d.error);
  $("live-cancel").hidden = true;
  const runs = d.runs && d.runs.length ? d.runs : live.runID ? [live.runID] : [];
  if (runs.length && d.status !== "removed") {
    const b = $("live-report");
    b.hidden = false;
    b.onclick = () => openReport(runs);
  }
  loadRuns();
  loadQueue();
}

// ---- quick TPC-C, TPC-H, durability and disk runs -------------------

// The quick runs' forms: the kind each posts, the prefix of its elements'
// ids (PREFIX-form, PREFIX-NAME with - for _, PREFIX-submit,
// PREFIX-error) and the keys it sends; server is the key of its list of
// managed servers (none: a disk run), and a form without a DSN field has
// only that list.
const quickRuns = [
  { kind: "tpcc", prefix: "start", server: "server", keys: ["server", "dsn", "vus", "rampup", "duration", "rate", "think_time"] },
  { kind: "tpch", prefix: "tpch", server: "server", keys: ["server", "dsn", "seed", "validate", "no_refresh", "streams", "repeat", "timeout"] },
  { kind: "durability", prefix: "durability", server: "managed", keys: ["managed", "cycles", "vus", "rate", "run_before_fault", "fault", "cold_cache"] },
  { kind: "disk", prefix: "disk", keys: ["target", "profile", "bs", "rw", "iodepth", "jobs", "duration", "ramp", "size", "rate_iops"] },
];

// loadServers offers the managed servers running on serve's host (again
// whenever a list gets focus): a run on one is posted by its data
// directory, and serve takes its DSN.
async function loadServers() {
  let r;
  try { r = await api("/api/v1/servers"); } catch (e) { return; }
  if (r.status !== 200) return;
  for (const q of quickRuns.filter((q) => q.server)) {
    const sel = $(q.prefix + "-" + q.server);
    const keep = sel.value;
    sel.replaceChildren(el("option", { value: "" }, q.keys.includes("dsn") ? "none: use the DSN below" : "choose a running managed server"),
      ...(r.body.servers || []).map((s) => el("option", { value: s.datadir }, s.engine + " " + s.version + " on port " + s.port + ": " + s.datadir)));
    sel.value = keep;
  }
}

// startRun posts q's form: each text that is not empty as it is, each
// checkbox that is checked as true; serve says what is wrong, by key.
async function startRun(ev, q) {
  ev.preventDefault();
  const form = $(q.prefix + "-form"), submit = $(q.prefix + "-submit"), general = $(q.prefix + "-error");
  clearErrors(form);
  const body = { kind: q.kind };
  for (const name of q.keys) {
    const input = $(q.prefix + "-" + name.replaceAll("_", "-"));
    if (input.type === "checkbox") {
      if (input.checked) body[name] = true;
      continue;
    }
    const v = input.value.trim();
    if (v !== "") body[name] = v;
  }
  submit.disabled = true;
  try {
    const r = await api("/api/v1/runs", { method: "POST", json: body });
    if (r.status === 202) {
      banner("Queued run " + r.body.id);
      loadQueue();
      watch("run", r.body.id);
      return;
    }
    showFieldErrors(form, r, general);
  } catch (e) {
    general.textContent = String(e);
  } finally {
    submit.disabled = false;
  }
}

function clearErrors(form) {
  for (const e of form.querySelectorAll(".error")) e.textContent = "";
  for (const e of form.querySelectorAll("[aria-invalid]")) e.removeAttribute("aria-invalid");
}

// showFieldErrors puts each problem next to the field it names, the rest
// in general.
function showFieldErrors(form, r, general) {
  const b = r.body && typeof r.body === "object" ? r.body : null;
  const problems = b && b.problems && b.problems.length ? b.problems : b ? [b] : [{ error: errorText(r) }];
  const rest = [];
  for (const p of problems) {
    const slot = p.field && form.querySelector('.error[data-field="' + CSS.escape(p.field) + '"]');
    if (slot) {
      slot.textContent = (slot.textContent ? slot.textContent + " " : "") + p.error;
      const input = form.querySelector('[name="' + CSS.escape(p.field) + '"]');
      if (input) input.setAttribute("aria-invalid", "true");
    } else rest.push(p.error);
  }
  general.textContent = rest.join("\n");
}

// ---- scenarios -------------------------------------------------------

const scen = { base: {}, edited: {} };

async function loadScenarios() {
  const r = await api("/api/v1/scenarios");
  if (r.status !== 200) { $("scenario-status").textContent = errorText(r); return; }
  const sel = $("scenario-name");
  sel.replaceChildren(...(r.body.scenarios || []).map((s) => el("option", { value: s.name }, s.name + (s.title ? " – " + s.title : ""))));
  if (sel.options.length) validateScenario(true);
}

function scenarioRequest() {
  const set = {};
  for (const [k, v] of Object.entries(scen.edited)) if (v !== scen.base[k]) set[k] = v;
  return { name: $("scenario-name").value, scale: $("scenario-scale").value, set };
}

// validateScenario asks serve for the scenario at the chosen scale (or
// the file's defaults when fresh) and shows its variables.
async function validateScenario(fresh) {
  $("scenario-errors").replaceChildren();
  if (fresh) { scen.edited = {}; $("scenario-scale").replaceChildren(); }
  const req = scenarioRequest();
  const r = await api("/api/v1/scenarios?validate=1", { method: "POST", json: req });
  if (r.status !== 200) { showScenarioErrors(r); return false; }
  const sc = r.body.scenario;
  const scale = $("scenario-scale");
  if (fresh || scale.options.length === 0) {
    scale.replaceChildren(el("option", { value: "" }, "(defaults)"), ...(sc.scales || []).map((s) => el("option", { value: s }, s)));
    scale.value = sc.scale || "";
  }
  if (Object.keys(scen.edited).length === 0) scen.base = Object.assign({}, sc.vars);
  renderVars(sc.vars || {});
  $("scenario-status").textContent = "Valid: " + (sc.title || sc.name) + ", " + (sc.steps || []).length + " steps" +
    (sc.scale ? " at scale " + sc.scale : "");
  return true;
}

function renderVars(vars) {
  const rows = Object.keys(vars).sort().map((k) => {
    const id = "var-" + k.replace(/[^A-Za-z0-9_-]/g, "_");
    const input = el("input", { id, type: "text", value: vars[k], size: 40, "data-var": k });
    input.addEventListener("input", () => { scen.edited[k] = input.value; });
    return el("tr", {}, el("th", { scope: "row" }, el("label", { htmlFor: id }, k)), el("td", {}, input));
  });
  $("scenario-vars").tBodies[0].replaceChildren(...rows);
}

function showScenarioErrors(r) {
  const b = r.body && typeof r.body === "object" ? r.body : null;
  const problems = b && b.problems && b.problems.length ? b.problems : [b || { error: errorText(r) }];
  $("scenario-status").textContent = "Not valid";
  $("scenario-errors").replaceChildren(...problems.map((p) => el("li", {}, wherePrefix(p) + p.error)));
}

// wherePrefix is "line:col: " (or "field: ") before a problem, unless its
// message names the place already.
function wherePrefix(p) {
  if (p.line) {
    const at = p.line + ":" + (p.col || 0);
    return p.error.includes(":" + at + ":") ? "" : at + ": ";
  }
  return p.field ? p.field + ": " : "";
}

async function runScenario(ev) {
  ev.preventDefault();
  if (!(await validateScenario(false))) return;
  const r = await api("/api/v1/scenarios", { method: "POST", json: scenarioRequest() });
  if (r.status !== 202) { showScenarioErrors(r); return; }
  banner("Queued scenario " + r.body.id);
  loadQueue();
  watch("scenario", r.body.id);
}

// ---- queue -----------------------------------------------------------

async function loadQueue() {
  let r;
  try { r = await api("/api/v1/queue"); } catch (e) { return; }
  if (r.status !== 200) return;
  const entries = r.body.entries || [];
  $("queue-empty").hidden = entries.length > 0;
  $("queue-table").tBodies[0].replaceChildren(...entries.map((e) => {
    const cancel = el("button", { type: "button", className: "cancel", "aria-label": "Cancel " + e.id }, "Cancel");
    cancel.addEventListener("click", () => cancelEntry(e));
    const watchB = el("button", { type: "button", "aria-label": "Watch " + e.id }, "Watch");
    watchB.addEventListener("click", () => watch(e.kind === "scenario" ? "scenario" : "run", e.id));
    return el("tr", { "data-id": e.id }, el("td", {}, e.id), el("td", {}, e.kind), el("td", {}, e.state),
      el("td", {}, fmtTime(e.submitted)), el("td", {}, fmtTime(e.started)), el("td", {}, watchB, " ", cancel));
  }));
  if (!live.stop) {
    const running = entries.find((e) => e.state === "running");
    if (running) watch(running.kind === "scenario" ? "scenario" : "run", running.id);
  }
}

async function cancelEntry(e) {
  const path = (e.kind === "scenario" ? "/api/v1/scenarios/" : "/api/v1/runs/") + encodeURIComponent(e.id) + "/cancel";
  const r = await api(path, { method: "POST" });
  banner(r.status === 202 ? e.id + ": " + r.body.state : e.id + ": " + errorText(r));
  loadQueue();
}

// ---- runs, comparison, reports ---------------------------------------

const runsView = { offset: 0, limit: 50, total: 0, selected: new Set() };

async function loadRuns() {
  const q = new URLSearchParams({ offset: runsView.offset, limit: runsView.limit });
  if ($("runs-group").value.trim()) q.set("group", $("runs-group").value.trim());
  if ($("runs-kind").value) q.set("kind", $("runs-kind").value);
  let r;
  try { r = await api("/api/v1/runs?" + q); } catch (e) { banner(String(e)); return; }
  if (r.status !== 200) { banner(errorText(r)); return; }
  runsView.total = r.body.total;
  const runs = r.body.runs || [];
  $("runs-table").tBodies[0].replaceChildren(...runs.map(runRow));
  $("runs-page").textContent = runs.length
    ? (runsView.offset + 1) + "–" + (runsView.offset + runs.length) + " of " + runsView.total : "no runs";
  $("runs-prev").disabled = runsView.offset === 0;
  $("runs-next").disabled = runsView.offset + runs.length >= runsView.total;
  addOptions($("runs-groups"), runs.map((x) => x.group).filter(Boolean), true);
  addOptions($("runs-kind"), runs.map((x) => x.kind), false);
  updateCompareButton();
}

// addOptions adds the values a list or select lacks.
function addOptions(list, values, replace) {
  const have = new Set(replace ? [] : Array.from(list.options, (o) => o.value));
  if (replace) list.replaceChildren();
  for (const v of values) if (!have.has(v)) { have.add(v); list.append(el("option", { value: v }, v)); }
}

function runRow(run) {
  const id = run.id;
  const box = el("input", { type: "checkbox", checked: runsView.selected.has(id), "aria-label": "Select run " + id });
  box.addEventListener("change", () => {
    if (box.checked) runsView.selected.add(id); else runsView.selected.delete(id);
    updateCompareButton();
  });
  const actions = el("td", {});
  if (run.status === "running" || run.status === "queued") {
    const b = el("button", { type: "button", "aria-label": "Watch run " + id }, "Watch");
    b.addEventListener("click", () => watch("run", id));
    actions.append(b);
  } else {
    const b = el("button", { type: "button", className: "report", "aria-label": "Report of run " + id }, "Report");
    b.addEventListener("click", () => openReport([id]));
    actions.append(b);
  }
  return el("tr", { "data-id": id, "data-status": run.status },
    el("td", {}, box), el("td", { className: "status " + run.status }, run.status), el("td", {}, run.kind),
    el("td", {}, fmtTime(run.started_at)), el("td", {}, fmtDuration(run.started_at, run.finished_at)),
    el("td", {}, run.headline || ""), el("td", {}, run.group || ""), el("td", { className: "id" }, id), actions);
}

function updateCompareButton() {
  const n = runsView.selected.size;
  const b = $("runs-compare");
  b.disabled = n < 2;
  b.textContent = n ? "Compare selected (" + n + ")" : "Compare selected";
}

// compare shows the comparison of the selected runs (the first selected
// is the base) and their report.
async function compare() {
  const ids = Array.from(runsView.selected);
  if (ids.length < 2) return;
  const box = $("compare");
  box.hidden = false;
  const table = $("compare-table");
  table.hidden = true;
  $("compare-note").textContent = "Comparing " + ids.join(", ") + "…";
  openReport(ids);
  const q = new URLSearchParams();
  for (const id of ids) q.append("run", id);
  let r;
  try { r = await api("/api/v1/compare?" + q); } catch (e) { $("compare-note").textContent = String(e); return; }
  if (r.status === 404 && typeof r.body === "string") {
    $("compare-note").textContent = "This serve has no comparison (/api/v1/compare); see the report below.";
    return;
  }
  if (r.status !== 200) { $("compare-note").textContent = errorText(r); return; }
  const rows = (r.body.comparisons || []).map((c) => el("tr", {},
    el("td", {}, c.figure), el("td", {}, c.step === undefined ? "" : c.step), el("td", { className: "id" }, c.base),
    el("td", { className: "id" }, c.run), el("td", { className: "num" }, fmt(c.ratio, 3)),
    el("td", { className: "num" }, c.low === undefined || c.low === null ? "" : "[" + fmt(c.low, 3) + ", " + fmt(c.high, 3) + "]"),
    el("td", { className: "verdict" }, c.verdict), el("td", { className: "num" }, c.n === undefined ? "" : c.n)));
  table.tBodies[0].replaceChildren(...rows);
  table.hidden = rows.length === 0;
  $("compare-note").textContent = rows.length ? "Base: " + ids[0] : "Nothing to compare in these runs.";
}

// openReport fetches the report (with the token, which an iframe cannot
// send) and shows it in the frame; the link opens the same document.
let reportSeq = 0; // the newest report asked for; older answers are dropped

async function openReport(ids) {
  const seq = ++reportSeq;
  const box = $("report");
  box.hidden = false;
  $("report-title").textContent = "Report of " + ids.join(", ");
  $("report-error").textContent = "Loading…";
  const frame = $("report-frame");
  frame.removeAttribute("srcdoc");
  const path = "/api/v1/report?run=" + ids.map(encodeURIComponent).join(",");
  const r = await api(path);
  if (seq !== reportSeq) return;
  if (r.status !== 200) { $("report-error").textContent = errorText(r); return; }
  $("report-error").textContent = "";
  frame.srcdoc = r.body;
  const link = $("report-open");
  if (link.dataset.blob) URL.revokeObjectURL(link.dataset.blob);
  if (sessionStorage.getItem(tokenKey)) {
    link.href = URL.createObjectURL(new Blob([r.body], { type: "text/html" }));
    link.dataset.blob = link.href;
  } else {
    link.href = path;
    delete link.dataset.blob;
  }
  box.scrollIntoView({ block: "start" });
}

// ---- start -----------------------------------------------------------

function init() {
  for (const q of quickRuns) {
    $(q.prefix + "-form").addEventListener("submit", (ev) => startRun(ev, q));
    if (q.keys.includes("dsn")) {
      $(q.prefix + "-dsn-show").addEventListener("change", (ev) => { $(q.prefix + "-dsn").type = ev.target.checked ? "text" : "password"; });
    }
    if (q.server) $(q.prefix + "-" + q.server).addEventListener("focus", loadServers);
  }
  $("scenario-name").addEventListener("change", () => validateScenario(true));
  $("scenario-scale").addEventListener("change", () => validateScenario(false));
  $("scenario-validate").addEventListener("click", () => validateScenario(false));
  $("scenario-form").addEventListener("submit", runScenario);
  $("runs-filter").addEventListener("submit", (ev) => { ev.preventDefault(); runsView.offset = 0; loadRuns(); });
  $("runs-refresh").addEventListener("click", loadRuns);
  $("runs-prev").addEventListener("click", () => { runsView.offset = Math.max(0, runsView.offset - runsView.limit); loadRuns(); });
  $("runs-next").addEventListener("click", () => { runsView.offset += runsView.limit; loadRuns(); });
  $("runs-compare").addEventListener("click", compare);
  $("report-close").addEventListener("click", () => { $("report").hidden = true; $("report-frame").removeAttribute("srcdoc"); });
  $("live-cancel").addEventListener("click", () => {
    if (live.id) cancelEntry({ id: live.id, kind: live.path.includes("/scenarios/") ? "scenario" : "run" });
  });
  loadQueue();
  loadRuns();
  loadScenarios();
  loadServers();
  setInterval(loadQueue, 3000);
}

init();
