"use strict";
// rostrace report: tables and canvas plots from the JSON in #data. No library, nothing fetched.
window.addEventListener("error", (e) => {
  document.body.dataset.errors = (document.body.dataset.errors || "") + e.message + "; ";
});

const T0 = performance.now();
const D = JSON.parse(document.getElementById("data").textContent);
const R = D.report, I = D.inst;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

function dur(ns) {
  if (ns == null || !isFinite(ns)) return "-";
  const a = Math.abs(ns);
  if (a < 1e3) return ns.toFixed(0) + " ns";
  if (a < 1e6) return (ns / 1e3).toPrecision(4) + " us";
  if (a < 1e9) return (ns / 1e6).toPrecision(4) + " ms";
  return (ns / 1e9).toPrecision(4) + " s";
}
// A statistic of a Stats object, "-" when it has no value.
const st = (s, k) => (s && s.count ? dur(s[k]) : "-");
const secs = (us) => (us / 1e6).toFixed(us < 1e7 ? 4 : 2) + " s";
const pct = (x) => (100 * x).toFixed(1) + "%";
// Distinct colors, as #rrggbb (what fillStyle reads back).
function hue(i) {
  const h = (i * 137.508) % 360, s = 0.55, l = 0.52, a = s * Math.min(l, 1 - l);
  const f = (n) => { const k = (n + h / 30) % 12; return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1)))).toString(16).padStart(2, "0"); };
  return "#" + f(0) + f(8) + f(4);
}

function section(id, title, open) {
  const body = el("div", { class: "body" });
  const d = el("details", { class: "section", id }, el("summary", { text: title }), body);
  if (open) d.open = true;
  document.getElementById("main").append(d);
  return body;
}

// A sortable table. cols: [{h, n (numeric), f (row -> text), v (row -> sort value)}].
function table(cols, rows, onselect, id) {
  const tbody = el("tbody");
  let sel = null, all = rows.length <= 100;
  function fill() {
    tbody.replaceChildren();
    for (const r of all ? rows : rows.slice(0, 100)) {
      const tr = el("tr", {}, ...cols.map((c) => el("td", { class: c.n ? "n" : "", text: c.f(r) })));
            if (onselect) tr.addEventListener("click", () => { if (sel) sel.classList.remove("sel"); sel = tr; tr.classList.add("sel"); onselect(r); });
      tbody.append(tr);
    }
    if (!all) {
      const more = el("td", { colspan: cols.length, class: "more", text: `… ${rows.length - 100} more rows: show them`, onclick: () => { all = true; fill(); } });
      tbody.append(el("tr", {}, more));
    }
  }
  const head = el("tr", {}, ...cols.map((c, i) => el("th", { class: c.n ? "n" : "", text: c.h, onclick: () => {
    const v = c.v || c.f;
    const dir = head.dataset.sort == i ? -1 : 1;
    head.dataset.sort = dir === 1 ? i : -1;
    rows.sort((a, b) => { const x = v(a), y = v(b); return (x > y ? 1 : x < y ? -1 : 0) * (c.n ? -dir : dir); });
    fill();
  } })));
  fill();
  const t = el("table", { "data-table": id || "" }, el("thead", {}, head), tbody);
  return { node: el("div", { class: "scroll" }, t), select: (i) => { const tr = tbody.children[i]; if (tr) tr.click(); } };
}

const tip = el("div", { class: "tip" });
document.body.append(tip);

// A plot on a canvas: x zooms with the wheel, pans by dragging, resets on double-click;
// `hover(x, y)` (data coordinates) gives the tooltip's text.
class Plot {
  constructor(parent, title, o) {
    this.o = Object.assign({ height: 220, xTime: false, yDur: false, ml: 70, mb: 24 }, o);
    this.canvas = el("canvas", { "data-plot": o.id || title });
    parent.append(el("div", { class: "plot" }, el("div", { class: "t", text: title }), this.canvas));
    this.x = [0, 1]; this.full = [0, 1]; this.y = [0, 1];
    const c = this.canvas;
    c.addEventListener("wheel", (e) => {
      e.preventDefault();
      const f = e.deltaY > 0 ? 1.25 : 0.8, m = this.ix(e.offsetX);
      let a = m - (m - this.x[0]) * f, b = m + (this.x[1] - m) * f;
      if (b - a > this.full[1] - this.full[0]) [a, b] = this.full;
      this.x = [a, b]; this.draw();
    }, { passive: false });
    let drag = null;
    c.addEventListener("mousedown", (e) => { drag = { px: e.offsetX, x: this.x.slice() }; });
    window.addEventListener("mouseup", () => { drag = null; });
    c.addEventListener("mousemove", (e) => {
      if (drag) {
        const d = (e.offsetX - drag.px) / this.pw() * (drag.x[1] - drag.x[0]);
        this.x = [drag.x[0] - d, drag.x[1] - d]; this.draw(); return;
      }
      const t = this.hover ? this.hover(this.ix(e.offsetX), e.offsetY) : null;
      if (t) { tip.textContent = t; tip.style.display = "block"; tip.style.left = e.clientX + 12 + "px"; tip.style.top = e.clientY + 12 + "px"; }
      else tip.style.display = "none";
    });
    c.addEventListener("mouseleave", () => { tip.style.display = "none"; });
    c.addEventListener("dblclick", () => { this.x = this.full.slice(); this.draw(); });
    window.addEventListener("resize", () => this.draw());
  }
  pw() { return this.w - this.o.ml - 10; }
  ph() { return this.h - this.o.mb - 8; }
  px(v) { return this.o.ml + (v - this.x[0]) / (this.x[1] - this.x[0] || 1) * this.pw(); }
  ix(p) { return this.x[0] + (p - this.o.ml) / this.pw() * (this.x[1] - this.x[0]); }
  py(v) { return 8 + this.ph() - (v - this.y[0]) / (this.y[1] - this.y[0] || 1) * this.ph(); }
  set(x, y) { this.full = x.slice(); this.x = x.slice(); this.y = y; this.draw(); }
  draw() {
    const c = this.canvas, r = window.devicePixelRatio || 1;
    this.w = c.parentElement.clientWidth - 14 || 600; this.h = this.o.height;
    c.width = this.w * r; c.height = this.h * r; c.style.height = this.h + "px";
    const g = c.getContext("2d");
    g.setTransform(r, 0, 0, r, 0, 0);
    g.clearRect(0, 0, this.w, this.h);
    g.font = "11px system-ui, sans-serif"; g.fillStyle = "#667085"; g.strokeStyle = "#e4e7ec";
    const n = 6;
    for (let i = 0; i <= n; i++) {
      const v = this.x[0] + (this.x[1] - this.x[0]) * i / n, p = this.px(v);
      g.beginPath(); g.moveTo(p, 8); g.lineTo(p, 8 + this.ph()); g.stroke();
      const s = this.o.xTime ? secs(v) : this.o.xDur ? dur(v) : v.toPrecision(4);
      g.textAlign = i === 0 ? "left" : i === n ? "right" : "center"; g.fillText(s, p, this.h - 8);
    }
    if (!this.o.rows) {
      for (let i = 0; i <= 4; i++) {
        const v = this.y[0] + (this.y[1] - this.y[0]) * i / 4, p = this.py(v);
        g.beginPath(); g.moveTo(this.o.ml, p); g.lineTo(this.w - 10, p); g.stroke();
        g.textAlign = "right"; g.fillText(this.o.yDur ? dur(v) : String(Math.round(v)), this.o.ml - 4, p + 4);
      }
    }
    g.save(); g.beginPath(); g.rect(this.o.ml, 0, this.pw(), this.h); g.clip();
    const drawn = this.render ? this.render(g) : 0;
    g.restore();
    c.dataset.drawn = drawn;
  }
}

function lowerBound(a, v) { let lo = 0, hi = a.length; while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < v) lo = m + 1; else hi = m; } return lo; }

// Points (x, y) over time, and their histogram.
function series(parent, title, xs, ys, id) {
  const p = new Plot(parent, title + " over time", { xTime: true, yDur: true, id: id + "-time" });
  let ymax = 0; for (const y of ys) if (y > ymax) ymax = y;
  p.render = (g) => {
    let k = 0; g.fillStyle = "#2f6feb";
    const a = lowerBound(xs, p.x[0]), b = lowerBound(xs, p.x[1]);
    const step = Math.max(1, Math.floor((b - a) / 20000));
    for (let i = a; i < b; i += step) { g.fillRect(p.px(xs[i]) - 1.5, p.py(ys[i]) - 1.5, 3, 3); k++; }
    return k;
  };
  p.hover = (x) => { const i = lowerBound(xs, x); return i < xs.length ? `${secs(xs[i])}: ${dur(ys[i])}` : null; };
  const span = xs.length ? [xs[0], xs[xs.length - 1] + 1] : [0, 1];
  p.set(span, [0, ymax * 1.05 || 1]);
  const h = new Plot(parent, title + " distribution", { xDur: true, id: id + "-hist" });
  let lo = Infinity; for (const y of ys) if (y < lo) lo = y;
  if (!isFinite(lo)) lo = 0;
  const bins = 40, hi = Math.max(ymax, lo + 1);
  const counts = new Array(bins).fill(0);
  for (const y of ys) counts[Math.min(bins - 1, Math.floor((y - lo) / (hi - lo) * bins))]++;
  const w = (hi - lo) / bins;
  h.render = (g) => {
    g.fillStyle = "#2f6feb"; let k = 0;
    counts.forEach((c, i) => { if (!c) return; const x0 = h.px(lo + i * w), x1 = h.px(lo + (i + 1) * w); g.fillRect(x0 + 0.5, h.py(c), Math.max(1, x1 - x0 - 1), h.py(0) - h.py(c)); k++; });
    return k;
  };
  h.hover = (x) => { const i = Math.floor((x - lo) / w); return i >= 0 && i < bins ? `${dur(lo + i * w)} – ${dur(lo + (i + 1) * w)}: ${counts[i]}` : null; };
  h.set([lo, hi], [0, Math.max(...counts) * 1.1 || 1]);
}

function overview() {
  const b = section("overview", "Overview", true);
  const span = R.begin_ns != null ? (R.end_ns - R.begin_ns) / 1e9 : 0;
  const cards = [
    ["events", "events", R.events], ["ros_events", "ROS 2 events", R.ros_events],
    ["duration", "seconds traced", span.toFixed(2)], ["processes", "processes", R.processes.length],
    ["nodes", "nodes", R.nodes.length], ["topics", "topics", R.topics.length],
    ["callbacks", "callbacks", R.callbacks.length], ["runs", "callback runs", I.run_s.length],
    ["flows_matched", "messages matched", R.flows_matched], ["flows_unmatched", "takes unmatched", R.flows_unmatched],
    ["discarded_events", "events discarded", R.discarded_events],
  ];
  b.append(el("div", { class: "cards" }, ...cards.map(([k, t, v]) =>
    el("div", { class: "card", "data-key": k, "data-value": String(v) }, el("div", { class: "v", text: Number(v).toLocaleString("en-US") }), el("div", { class: "k", text: t })))));
  if (R.begin_ns != null) b.append(el("p", { class: "hint", text: `From ${new Date(R.begin_ns / 1e6).toISOString()} to ${new Date(R.end_ns / 1e6).toISOString()}` }));
  if (R.notes.length) {
    b.append(el("h4", { text: "What this trace cannot show" }));
    b.append(el("ul", { class: "notes", "data-list": "notes" }, ...R.notes.map((n) => el("li", { text: `${n.metric} needs ${n.needs.join(" or ")}: ${n.reason}` }))));
  }
  const errs = R.read_errors.concat(R.warnings);
  if (errs.length) {
    b.append(el("h4", { text: `Read errors and warnings (${errs.length})` }));
    b.append(el("ul", { class: "notes", "data-list": "warnings" }, ...errs.slice(0, 100).map((w) => el("li", { text: w }))));
  }
  // Publishers -> topic -> subscribers.
  const rows = R.topics.map((t) => t);
  b.append(el("h4", { text: "Topics: who publishes, who subscribes" }));
  b.append(table([
    { h: "publishers", f: (t) => t.publishers.join(" ") },
    { h: "topic", f: (t) => t.name },
    { h: "subscribers", f: (t) => t.subscribers.join(" ") },
  ], rows, null, "graph").node);
  b.lastChild.classList.add("wrap");
}

function shares() {
  if (!R.per_node.length) return;
  const b = section("shares", "Callback time per process, node and thread", false);
  for (const [name, v] of [["node", R.per_node], ["process", R.per_process], ["thread", R.per_thread]]) {
    const max = Math.max(...v.map((x) => x.share), 1e-9);
    b.append(el("h4", { text: "Per " + name }));
    b.append(table([
      { h: name, f: (x) => x.vtid != null ? `${x.name} ${x.vpid}/${x.vtid}` : x.name },
      { h: "runs", n: 1, f: (x) => String(x.runs), v: (x) => x.runs },
      { h: "callback time", n: 1, f: (x) => dur(x.callback_ns), v: (x) => x.callback_ns },
      { h: "share", n: 1, f: (x) => pct(x.share), v: (x) => x.share },
      { h: "", f: () => "", v: (x) => x.share },
    ], v.slice(), null, "share-" + name).node);
    b.lastChild.querySelectorAll("tbody tr").forEach((tr, i) => tr.lastChild.append(el("span", { class: "bar", style: `width:${Math.round(120 * v[i].share / max)}px` })));
  }
}

function callbacks() {
  const b = section("callbacks", "Callbacks", true);
  b.append(el("p", { class: "hint", text: "Click a callback for its durations; wheel zooms, drag pans, double-click resets." }));
  const owner = (c) => c.topic != null ? c.topic : c.timer_period_ns != null ? "timer " + dur(c.timer_period_ns) : "";
  const rows = R.callbacks.map((c, i) => Object.assign({ i }, c));
  rows.sort((a, b) => (b.count > 1) - (a.count > 1) || b.total_ns - a.total_ns);
  const plots = el("div", { class: "plots" });
  const runsOf = new Map();
  const t = table([
    { h: "node", f: (c) => c.node || "?" },
    { h: "kind", f: (c) => c.kind },
    { h: "owner", f: owner },
    { h: "runs", n: 1, f: (c) => String(c.count), v: (c) => c.count },
    { h: "mean", n: 1, f: (c) => st(c.duration_ns, "mean"), v: (c) => c.duration_ns.mean },
    { h: "p50", n: 1, f: (c) => st(c.duration_ns, "p50"), v: (c) => c.duration_ns.p50 },
    { h: "p99", n: 1, f: (c) => st(c.duration_ns, "p99"), v: (c) => c.duration_ns.p99 },
    { h: "max", n: 1, f: (c) => st(c.duration_ns, "max"), v: (c) => c.duration_ns.max },
    { h: "period", n: 1, f: (c) => st(c.period_ns, "mean"), v: (c) => c.period_ns.mean },
    { h: "jitter p99", n: 1, f: (c) => c.jitter_ns ? st(c.jitter_ns, "p99") : "", v: (c) => c.jitter_ns ? c.jitter_ns.p99 : 0 },
    { h: "share", n: 1, f: (c) => pct(c.share), v: (c) => c.share },
    { h: "symbol", f: (c) => c.symbol.length > 80 ? c.symbol.slice(0, 77) + "…" : c.symbol },
  ], rows, (c) => {
    if (!runsOf.size) I.run_c.forEach((k, j) => { if (I.run_d[j] >= 0) { if (!runsOf.has(k)) runsOf.set(k, []); runsOf.get(k).push(j); } });
    const js = runsOf.get(c.i) || [];
    plots.replaceChildren();
    series(plots, `${c.node} ${c.kind === "timer" ? "" : c.kind + " "}${owner(c)}: duration`, js.map((j) => I.run_s[j]), js.map((j) => I.run_d[j]), "callback");
  }, "callbacks");
  b.append(t.node, plots);
  if (rows.length) t.select(0);
}

function timeline() {
  if (!I.run_s.length) return;
  const b = section("timeline", "Timeline: callback runs per thread, and message flows", true);
  b.append(el("p", { class: "hint", text: "Wheel zooms, drag pans, double-click resets; message flows (publish → callback) show below 2 s of span." }));
  const used = new Set(I.run_t.concat(I.fl_pt, I.fl_ct));
  const rows = [...used].sort((a, c) => I.threads[a] < I.threads[c] ? -1 : 1);
  const rowOf = new Map(rows.map((t, i) => [t, i]));
  // Rows fit in about 700 px; below 10 px a row has no label (hovering names the thread).
  const rh = Math.max(2, Math.min(14, Math.floor(700 / rows.length)));
  const p = new Plot(b, `${rows.length} threads`, { xTime: true, rows: true, height: rows.length * rh + 34, ml: 190, id: "timeline" });
  let maxd = 0; for (const d of I.run_d) if (d > maxd) maxd = d;
  const end = (I.t1_ns - I.t0_ns) / 1000;
  // Colors as pixels (RGBA bytes in memory order).
  const px32 = (hex) => { const v = parseInt(hex.slice(1), 16); return (255 << 24 | (v & 255) << 16 | (v >> 8 & 255) << 8 | v >> 16) >>> 0; };
  const colors = R.callbacks.map((_, i) => px32(hue(i))), GREY = px32("#98a2b3");
  const y = (t) => 8 + rowOf.get(t) * rh;
  p.render = (g) => {
    let k = 0;
    const a = lowerBound(I.run_s, p.x[0] - maxd / 1000), z = lowerBound(I.run_s, p.x[1]);
    // Runs are painted into a pixel buffer (device pixels), a span per run and row: the cost
    // is bounded by the canvas's size, whatever the number of runs.
    const r = window.devicePixelRatio || 1, W = Math.max(1, Math.round(p.pw() * r)), H = Math.max(1, Math.round(rows.length * rh * r));
    const img = g.createImageData(W, H), buf = new Uint32Array(img.data.buffer);
    const last = new Int32Array(I.threads.length).fill(-1);
    const pad = rh > 4 ? Math.round(r) : 0;
    for (let i = a; i < z; i++) {
      const s = I.run_s[i], d = I.run_d[i] < 0 ? end - s : I.run_d[i] / 1000;
      if (s + d < p.x[0]) continue;
      const t = I.run_t[i];
      const x0 = Math.max(0, Math.floor((p.px(s) - p.o.ml) * r)), x1 = Math.min(W, Math.max(x0 + 1, Math.ceil((p.px(s + d) - p.o.ml) * r)));
      if (x1 <= last[t] || x0 >= W) continue;
      const from = Math.max(x0, last[t]);
      last[t] = x1;
      const col = I.run_c[i] < 0 ? GREY : colors[I.run_c[i]];
      const row = rowOf.get(t), y0 = Math.floor(row * rh * r) + pad, y1 = Math.floor((row + 1) * rh * r) - pad;
      for (let yy = y0; yy < Math.max(y1, y0 + 1); yy++) buf.fill(col, yy * W + from, yy * W + x1);
      k++;
    }
    g.putImageData(img, Math.round(p.o.ml * r), Math.round(8 * r));
    if (p.x[1] - p.x[0] < 2e6) {
      g.strokeStyle = "rgba(29,35,48,0.55)"; g.lineWidth = 1;
      const fa = lowerBound(I.fl_p, p.x[0] - 1e6), fz = lowerBound(I.fl_p, p.x[1]);
      for (let i = fa; i < fz && i < fa + 5000; i++) {
        g.beginPath(); g.moveTo(p.px(I.fl_p[i]), y(I.fl_pt[i]) + rh / 2); g.lineTo(p.px(I.fl_c[i]), y(I.fl_ct[i]) + rh / 2); g.stroke(); k++;
      }
    }
    g.restore(); g.save();
    g.fillStyle = "#1d2330"; g.textAlign = "right"; g.font = "11px system-ui, sans-serif";
    if (rh >= 10) rows.forEach((t, i) => { const s = I.threads[t]; g.fillText(s.length > 30 ? s.slice(0, 29) + "…" : s, p.o.ml - 6, 8 + i * rh + 11); });
    else g.fillText("hover for the thread", p.o.ml - 6, 18);
    return k;
  };
  p.hover = (x, py) => {
    const row = Math.floor((py - 8) / rh); if (row < 0 || row >= rows.length) return null;
    const t = rows[row];
    const a = lowerBound(I.run_s, x - maxd / 1000), z = lowerBound(I.run_s, x + 1);
    for (let i = z - 1; i >= a; i--) {
      if (I.run_t[i] !== t) continue;
      const d = I.run_d[i] < 0 ? Infinity : I.run_d[i] / 1000;
      if (I.run_s[i] <= x && x <= I.run_s[i] + Math.max(d, (p.x[1] - p.x[0]) / p.pw())) {
        const c = R.callbacks[I.run_c[i]];
        return `${I.threads[t]}\n${c ? `${c.node} ${c.kind} ${c.topic || ""}` : "unknown callback"}\nstart ${secs(I.run_s[i])}, ${I.run_d[i] < 0 ? "unfinished" : dur(I.run_d[i])}`;
      }
    }
    return I.threads[t];
  };
  p.set([0, Math.max(end, 1)], [0, 1]);
}

function topics() {
  if (!R.topics.length) return;
  const b = section("topics", "Topics: message latency", true);
  b.append(el("p", { class: "hint", text: "Click a topic for its latency (publish → callback start, else publish → take)." }));
  const plots = el("div", { class: "plots" });
  const flowsOf = new Map(); I.fl_topic.forEach((t, j) => { if (!flowsOf.has(t)) flowsOf.set(t, []); flowsOf.get(t).push(j); });
  const rows = R.topics.slice();
  const t = table([
    { h: "topic", f: (x) => x.name },
    { h: "published", n: 1, f: (x) => String(x.publishes), v: (x) => x.publishes },
    { h: "taken", n: 1, f: (x) => String(x.takes), v: (x) => x.takes },
    { h: "matched", n: 1, f: (x) => String(x.matched), v: (x) => x.matched },
    { h: "unmatched", n: 1, f: (x) => String(x.unmatched), v: (x) => x.unmatched },
    { h: "dropped", n: 1, f: (x) => x.dropped == null ? "" : String(x.dropped), v: (x) => x.dropped || 0 },
    { h: "pub→take mean", n: 1, f: (x) => st(x.pub_to_take_ns, "mean"), v: (x) => x.pub_to_take_ns.mean },
    { h: "pub→callback mean", n: 1, f: (x) => st(x.pub_to_callback_ns, "mean"), v: (x) => x.pub_to_callback_ns.mean },
    { h: "pub→callback p99", n: 1, f: (x) => st(x.pub_to_callback_ns, "p99"), v: (x) => x.pub_to_callback_ns.p99 },
  ], rows, (x) => {
    plots.replaceChildren();
    const js = flowsOf.get(I.topics.indexOf(x.name)) || [];
    if (js.length) series(plots, `${x.name}: latency`, js.map((j) => I.fl_p[j]), js.map((j) => I.fl_lat[j]), "topic");
    else plots.append(el("p", { class: "hint", text: "No message of this topic was matched from its publication to its take." }));
  }, "topics");
  b.append(t.node, plots);
  const first = rows.findIndex((x) => x.matched > 0);
  t.select(first < 0 ? 0 : first);
}

function paths() {
  const lp = R.longest_paths;
  if (!lp || !lp.paths.length) return;
  const b = section("paths", "End-to-end paths: the longest from sources to sinks", true);
  b.append(el("p", { class: "hint", text: `${lp.sources} sources (nodes whose timers publish), ${lp.sinks} sinks (subscriptions publishing nothing); click a path for its messages' latency and where the time goes; \`rostrace e2e --path ...\` has every record.` }));
  const plots = el("div", {});
  const t = table([
    { h: "path", f: (p) => p.label },
    { h: "mean", n: 1, f: (p) => p.complete ? dur(p.latency.mean) : "-", v: (p) => p.latency.mean },
    { h: "p99", n: 1, f: (p) => p.complete ? dur(p.latency.p99) : "-", v: (p) => p.latency.p99 },
    { h: "max", n: 1, f: (p) => p.complete ? dur(p.latency.max) : "-", v: (p) => p.latency.max },
    { h: "complete", n: 1, f: (p) => `${p.complete}/${p.records}`, v: (p) => p.complete },
    { h: "dropped", n: 1, f: (p) => String(p.dropped), v: (p) => p.dropped },
  ], lp.paths.map((p, i) => Object.assign({ i }, p)), (p) => {
    plots.replaceChildren();
    const x = D.paths[p.i];
    if (!x || !x.s.length) { plots.append(el("p", { class: "hint", text: "No message went the whole way along this path." })); return; }
    const total = x.segments.reduce((a, g) => a + g[2], 0) || 1;
    const bar = el("div", { class: "stack", "data-plot": "path-segments", "data-drawn": String(x.segments.length) });
    x.segments.forEach((g, i) => bar.append(el("span", { style: `width:${(100 * g[2] / total).toFixed(3)}%;background:${hue(i)}`, title: `${g[0]} (${g[1]}): mean ${dur(g[2])}, ${pct(g[2] / total)}` })));
    plots.append(el("h4", { text: "Where the time goes (mean per segment; hover for each)" }), bar);
    plots.append(el("div", { class: "legend" }, ...x.segments.map((g, i) => el("span", {}, el("i", { style: `background:${hue(i)}` }), `${g[0]} ${dur(g[2])}`))));
    const grid = el("div", { class: "plots" });
    plots.append(grid);
    series(grid, "end-to-end latency", x.s, x.lat, "path");
  }, "paths");
  b.append(t.node, plots);
  const first = lp.paths.findIndex((p) => p.complete > 0);
  if (first >= 0) t.select(first);
}

function services() {
  if (!R.services.length) return;
  const b = section("services", "Services", false);
  b.append(table([
    { h: "service", f: (s) => s.name }, { h: "server", f: (s) => s.server_node },
    { h: "sent", n: 1, f: (s) => String(s.requests_sent), v: (s) => s.requests_sent },
    { h: "served", n: 1, f: (s) => String(s.requests_served), v: (s) => s.requests_served },
    { h: "request", n: 1, f: (s) => st(s.request_ns, "mean"), v: (s) => s.request_ns.mean },
    { h: "service", n: 1, f: (s) => st(s.service_ns, "mean"), v: (s) => s.service_ns.mean },
    { h: "response", n: 1, f: (s) => st(s.response_ns, "mean"), v: (s) => s.response_ns.mean },
    { h: "round trip p99", n: 1, f: (s) => st(s.round_trip_ns, "p99"), v: (s) => s.round_trip_ns.p99 },
  ], R.services.slice(), null, "services").node);
}

function executors() {
  if (!R.executor_threads.length) return;
  const b = section("executors", "Executor phases per thread", false);
  const rows = R.executor_threads.slice();
  b.append(table([
    { h: "thread", f: (e) => `${e.procname} ${e.vpid}/${e.vtid}` },
    { h: "get next", n: 1, f: (e) => dur(e.get_next_ns), v: (e) => e.get_next_ns },
    { h: "wait", n: 1, f: (e) => dur(e.wait_ns), v: (e) => e.wait_ns },
    { h: "execute", n: 1, f: (e) => dur(e.execute_ns), v: (e) => e.execute_ns },
    { h: "executions", n: 1, f: (e) => String(e.executions), v: (e) => e.executions },
  ], rows, null, "executors").node);
}

overview();
callbacks();
timeline();
topics();
paths();
shares();
services();
executors();
document.body.dataset.rendered = "ok";
document.body.dataset.renderMs = Math.round(performance.now() - T0);
