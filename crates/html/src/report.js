"use strict";
// rostrace report: tables and canvas plots from the JSON in #data. No library, nothing fetched.
window.addEventListener("error", (e) => {
  document.body.dataset.errors = (document.body.dataset.errors || "") + e.message + "; ";
});

const T0 = performance.now();
const D = JSON.parse(document.getElementById("data").textContent);
const R = D.report, I = D.inst;
// Tables cut to their heaviest rows in this page (past a size): table → rows in the analysis.
const CAPPED = new Map((D.capped || []).map((c) => [c.table, c.total]));
const total = (name) => CAPPED.has(name) ? CAPPED.get(name) : R[name].length;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null) continue;
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

// A sortable table. cols: [{h, n (numeric), w (long text, wrapped), f (row -> text), v (row -> sort value)}].
function table(cols, rows, onselect, id) {
  const tbody = el("tbody");
  let sel = null, all = rows.length <= 100;
  function fill() {
    tbody.replaceChildren();
    for (const r of all ? rows : rows.slice(0, 100)) {
      const tr = el("tr", {}, ...cols.map((c) => el("td", { class: c.n ? "n" : c.w ? "w" : "", text: c.f(r) })));
            if (onselect) tr.addEventListener("click", () => { if (sel) sel.classList.remove("sel"); sel = tr; tr.classList.add("sel"); onselect(r); });
      tbody.append(tr);
    }
    if (!all) {
      const more = el("td", { colspan: cols.length, class: "more", text: `… ${rows.length - 100} more rows: show them`, onclick: () => { all = true; fill(); } });
      tbody.append(el("tr", {}, more));
    }
  }
  const head = el("tr", {}, ...cols.map((c, i) => el("th", { class: c.n ? "n" : "", text: c.h, title: c.t || "", onclick: () => {
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
  if (I.sampled) {
    // Drawn from each part's extremes, a histogram would not be the distribution.
    parent.append(el("p", { class: "hint", "data-no-hist": id, text: "The plot keeps each part's shortest and longest values; the table's percentiles are those of every value." }));
    return;
  }
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

// A stacked bar of parts [[name, value]] (colored by position); `id`, if given, names it for tests.
function stackBar(parts, id) {
  const total = parts.reduce((a, x) => a + Math.max(0, x[1] || 0), 0) || 1;
  const bar = el("div", { class: "stack", "data-plot": id, "data-drawn": id && String(parts.length) });
  parts.forEach((x, i) => bar.append(el("span", { style: `width:${(100 * Math.max(0, x[1] || 0) / total).toFixed(3)}%;background:${hue(i)}`, title: `${x[0]}: ${dur(x[1])}, ${pct((x[1] || 0) / total)}` })));
  return bar;
}
const legend = (names, values) => el("div", { class: "legend" }, ...names.map((n, i) => el("span", {}, el("i", { style: `background:${hue(i)}` }), values ? `${n} ${dur(values[i])}` : n)));

// One stacked bar per row, widths relative to the largest total: parts [[name, row -> ns]].
function bars(parent, rows, label, parts, id) {
  const tot = rows.map((r) => parts.reduce((a, p) => a + Math.max(0, p[1](r) || 0), 0));
  const max = Math.max(...tot, 1e-9);
  const box = el("div", { class: "bars", "data-plot": id, "data-drawn": String(rows.length) });
  rows.forEach((r, i) => {
    const bar = stackBar(parts.map((p) => [p[0], p[1](r)]));
    bar.style.width = `${(100 * tot[i] / max).toFixed(2)}%`;
    box.append(el("div", { class: "barrow" }, el("span", { class: "lbl", text: label(r), title: label(r) }), el("div", { class: "track" }, bar), el("span", { class: "tot", text: dur(tot[i]) })));
  });
  parent.append(box, legend(parts.map((p) => p[0])));
}

const SVGNS = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...kids) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

// Several hosts: each one's colour, and the host of each node by name.
const HOSTS = (R.hosts || []).map((h) => h.host);
const hostColor = (h) => `hsl(${Math.round(HOSTS.indexOf(h) * 360 / Math.max(1, HOSTS.length)) + 20}, 65%, 42%)`;
const NODE_HOST = new Map(HOSTS.length > 1 ? R.nodes.map((n) => [n.name, n.host]) : []);

// The node graph: nodes → topic → nodes, in layers from the sources (longest-path layering
// with the edges closing cycles left out, then barycenter ordering within each layer).
function nodeGraph(topics, onpick) {
  const V = [], id = new Map(), out = [], inn = [], E = [];
  const vert = (key, name, topic) => {
    if (!id.has(key)) { id.set(key, V.length); V.push({ name, topic, pubs: 0, subs: 0 }); out.push([]); inn.push([]); }
    return id.get(key);
  };
  for (const t of topics) {
    const tv = vert("t" + t.name, t.name, true);
    for (const n of new Set(t.publishers)) E.push([vert("n" + n, n, false), tv]);
    for (const n of new Set(t.subscribers)) E.push([tv, vert("n" + n, n, false)]);
  }
  E.forEach(([a, c], i) => { out[a].push(i); inn[c].push(i); });
  // Depth-first from the sources first: the edges back to a vertex on the stack close cycles.
  const state = new Uint8Array(V.length), back = new Uint8Array(E.length);
  const roots = [...V.keys()].sort((a, c) => (inn[a].length > 0) - (inn[c].length > 0));
  for (const r of roots) {
    if (state[r]) continue;
    const stack = [[r, 0]]; state[r] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1], v = top[0];
      if (top[1] < out[v].length) {
        const e = out[v][top[1]++], w = E[e][1];
        if (state[w] === 1) back[e] = 1; else if (!state[w]) { state[w] = 1; stack.push([w, 0]); }
      } else { state[v] = 2; stack.pop(); }
    }
  }
  const indeg = inn.map((es) => es.filter((e) => !back[e]).length), layer = new Array(V.length).fill(0);
  const queue = [...V.keys()].filter((v) => !indeg[v]), order = [];
  while (queue.length) {
    const v = queue.pop();
    order.push(v);
    for (const e of out[v]) if (!back[e]) { const w = E[e][1]; layer[w] = Math.max(layer[w], layer[v] + 1); if (!--indeg[w]) queue.push(w); }
  }
  // Then each vertex as close to its successors as it can be: a source feeding a late node
  // stands next to it, not at the far left.
  for (const v of order.reverse()) {
    const next = out[v].filter((e) => !back[e]).map((e) => layer[E[e][1]]);
    if (next.length) layer[v] = Math.max(layer[v], Math.min(...next) - 1);
  }
  const L = Math.max(0, ...layer) + 1, layers = Array.from({ length: L }, () => []);
  V.forEach((_, v) => layers[layer[v]].push(v));
  const pos = new Float64Array(V.length);
  layers.forEach((vs) => vs.forEach((v, i) => { pos[v] = i; }));
  const sweep = (ls, nbrs, end) => {
    for (const vs of ls) {
      const bary = new Map(vs.map((v) => { const ns = nbrs[v].filter((e) => !back[e]).map((e) => pos[E[e][end]]); return [v, ns.length ? ns.reduce((a, x) => a + x, 0) / ns.length : pos[v]]; }));
      vs.sort((a, c) => bary.get(a) - bary.get(c));
      vs.forEach((v, i) => { pos[v] = i; });
    }
  };
  for (let k = 0; k < 4; k++) { sweep(layers.slice(1), inn, 0); sweep(layers.slice(0, -1).reverse(), out, 1); }
  // Several hosts: each column's nodes grouped by host (in the hosts' order), the topics in
  // between kept in their places.
  if (NODE_HOST.size) {
    for (const vs of layers) {
      const slots = vs.map((v, i) => V[v].topic ? -1 : i).filter((i) => i >= 0);
      const nodes = slots.map((i) => vs[i]).sort((a, c) => HOSTS.indexOf(NODE_HOST.get(V[a].name)) - HOSTS.indexOf(NODE_HOST.get(V[c].name)) || pos[a] - pos[c]);
      slots.forEach((i, k) => { vs[i] = nodes[k]; });
      vs.forEach((v, i) => { pos[v] = i; });
    }
  }
  const CW = 200, BW = 156, RH = 26, rows = Math.max(1, ...layers.map((vs) => vs.length));
  const xy = (v) => [10 + layer[v] * CW, 10 + pos[v] * RH];
  const W = 20 + (L - 1) * CW + BW, H = 20 + rows * RH;
  const g = svg("g", {});
  const edges = E.map(([a, c], i) => {
    const [x0, y0] = xy(a), [x1, y1] = xy(c), ya = y0 + 10, yc = y1 + 10;
    const d = back[i]
      ? `M${x0 + BW},${ya} C${x0 + BW + 60},${ya - 40} ${x1 - 60},${yc - 40} ${x1},${yc}`
      : `M${x0 + BW},${ya} C${(x0 + BW + x1) / 2},${ya} ${(x0 + BW + x1) / 2},${yc} ${x1},${yc}`;
    const p = svg("path", { d, class: back[i] ? "e back" : "e" });
    g.append(p); return p;
  });
  const short = (s) => s.length > 26 ? "…" + s.slice(-25) : s;
  V.forEach((x, v) => {
    const [px, py] = xy(v);
    const title = x.topic ? `topic ${x.name}\npublished by ${inn[v].map((e) => V[E[e][0]].name).join(", ")}\nsubscribed by ${out[v].map((e) => V[E[e][1]].name).join(", ")}`
      : `node ${x.name}\npublishes ${out[v].map((e) => V[E[e][1]].name).join(", ") || "-"}\nsubscribes ${inn[v].map((e) => V[E[e][0]].name).join(", ") || "-"}`;
    const host = x.topic ? null : NODE_HOST.get(x.name);
    const node = svg("g", { class: x.topic ? "v topic" : "v node", transform: `translate(${px},${py})`, ...(host != null ? { "data-host": host } : {}) },
      svg("rect", { width: BW, height: 20, rx: x.topic ? 10 : 3, ...(host != null ? { style: `stroke: ${hostColor(host)}; stroke-width: 2` } : {}) }),
      svg("text", { x: BW / 2, y: 14 }, short(x.name)), svg("title", {}, host != null ? `${title}\non host ${host}` : title));
    node.addEventListener("mouseenter", () => {
      root.classList.add("focus"); node.classList.add("on");
      for (const e of out[v].concat(inn[v])) edges[e].classList.add("on");
    });
    node.addEventListener("mouseleave", () => { root.classList.remove("focus"); root.querySelectorAll(".on").forEach((n) => n.classList.remove("on")); });
    node.addEventListener("click", (e) => { if (onpick) { e.stopPropagation(); onpick(x.name); } });
    g.append(node);
  });
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, "data-plot": "graph", "data-drawn": String(V.length), "data-edges": String(E.length), "data-back": String(back.reduce((a, x) => a + x, 0)) }, g);
  // Wheel zooms, drag pans, double-click shows it whole: on the viewBox. It opens at a
  // readable scale (at least 0.6), from the sources.
  root.setAttribute("preserveAspectRatio", "xMinYMin meet");
  let vb = [0, 0, W, H], home = vb;
  const set = () => root.setAttribute("viewBox", vb.join(" "));
  root.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = root.getBoundingClientRect(), f = e.deltaY > 0 ? 1.25 : 0.8;
    const mx = vb[0] + (e.clientX - r.left) / r.width * vb[2], my = vb[1] + (e.clientY - r.top) / r.height * vb[3];
    vb = [mx - (mx - vb[0]) * f, my - (my - vb[1]) * f, vb[2] * f, vb[3] * f]; set();
  }, { passive: false });
  let drag = null;
  root.addEventListener("mousedown", (e) => { drag = { x: e.clientX, y: e.clientY, vb: vb.slice() }; });
  window.addEventListener("mouseup", () => { drag = null; });
  root.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const r = root.getBoundingClientRect();
    vb = [drag.vb[0] - (e.clientX - drag.x) / r.width * vb[2], drag.vb[1] - (e.clientY - drag.y) / r.height * vb[3], vb[2], vb[3]]; set();
  });
  root.addEventListener("dblclick", () => { vb = vb === home ? [0, 0, W, H] : home; set(); });
  // Once in the page: its width decides the scale.
  const fit = (width) => {
    const scale = Math.max(0.6, Math.min(1, width / W)), height = Math.max(60, Math.min(640, H * scale));
    root.style.height = height + "px";
    vb = home = [0, 0, width / scale, height / scale]; set();
  };
  return { root, fit };
}

function graph(b) {
  const infra = new Set(["/rosout", "/parameter_events", "/clock"]);
  const all = R.topics.filter((t) => t.publishers.length && t.subscribers.length);
  if (!all.length) return;
  const cb = el("input", { type: "checkbox" }), box = el("div", { class: "graph" });
  const find = el("input", { type: "search", placeholder: "only around nodes or topics named…" });
  const draw = () => {
    let ts = all.filter((t) => cb.checked || !infra.has(t.name));
    // A filter keeps the matching nodes and topics and their neighbours.
    const q = find.value.trim();
    // "=NAME" (a click on a node or topic, or #graph=NAME in the address): that one and its
    // neighbours; other text: every name containing it.
    if (q) {
      const exact = q.startsWith("=") ? q.slice(1) : null;
      const hit = exact != null ? (n) => n === exact : (n) => n.includes(q);
      const near = new Set(ts.filter((t) => hit(t.name) || t.publishers.some(hit) || t.subscribers.some(hit)).map((t) => t.name));
      ts = ts.filter((t) => near.has(t.name));
    }
    const g = nodeGraph(ts, (name) => {
      find.value = find.value === "=" + name ? "" : "=" + name;
      history.replaceState(null, "", find.value ? "#graph=" + encodeURIComponent(name) : location.pathname + location.search);
      draw();
    });
    box.replaceChildren(g.root);
    box.dataset.shown = String(ts.length);
    g.fit(box.clientWidth || 1200);
  };
  cb.addEventListener("change", draw);
  find.addEventListener("input", draw);
  const m = /^#graph=(.+)$/.exec(location.hash);
  if (m) { find.value = "=" + decodeURIComponent(m[1]); cb.checked = infra.has(find.value.slice(1)); }
  b.append(el("h4", { text: "Node graph: publishers → topic → subscribers" }),
    el("p", { class: "hint" }, "Nodes (boxes) and topics (rounded), from the sources on the left; dashed edges close a cycle. Hover for the neighbours, click one to see only it and its neighbours (click again for all; the page's address then opens there); wheel zooms, drag pans, double-click shows the whole graph. ",
      el("label", {}, cb, " show /rosout, /parameter_events and /clock"), " ", find),
    ...(NODE_HOST.size ? [el("p", { class: "hint", "data-list": "graph-hosts" }, "Nodes framed by host, grouped in each column: ",
      ...HOSTS.flatMap((h) => [el("span", { style: `color: ${hostColor(h)}; font-weight: 600`, text: `■ ${h}` }), " "]))] : []),
    box);
  draw();
}

function overview() {
  const b = section("overview", "Overview", true);
  const span = R.begin_ns != null ? (R.end_ns - R.begin_ns) / 1e9 : 0;
  const cards = [
    ["events", "events", R.events], ["ros_events", "ROS 2 events", R.ros_events],
    ["duration", "seconds traced", span.toFixed(2)], ["processes", "processes", R.processes.length],
    ["nodes", "nodes", total("nodes")], ["topics", "topics", total("topics")],
    ["callbacks", "callbacks", total("callbacks")], ["runs", "callback runs", I.sampled ? I.sampled.runs : I.run_s.length],
    ["flows_matched", "messages matched", R.flows_matched], ["flows_unmatched", "takes unmatched", R.flows_unmatched],
    ["discarded_events", "events discarded", R.discarded_events],
  ];
  b.append(el("div", { class: "cards" }, ...cards.map(([k, t, v]) =>
    el("div", { class: "card", "data-key": k, "data-value": String(v) }, el("div", { class: "v", text: Number(v).toLocaleString("en-US") }), el("div", { class: "k", text: t })))));
  if (CAPPED.size) {
    const what = { callbacks: "callbacks (most callback time)", topics: "topics (most messages)", nodes: "nodes (most callback time)",
      per_node: "nodes' time shares", per_process: "processes' time shares", per_thread: "threads' time shares",
      services: "services (most requests)", executor_threads: "executor threads (most time)" };
    b.append(el("p", { class: "hint", "data-capped": [...CAPPED.keys()].join(" "), text: `This page holds the rows that weigh most of each large table: ${[...CAPPED].map(([k, n]) => `${R[k].length.toLocaleString("en-US")} of ${n.toLocaleString("en-US")} ${what[k] || k}`).join(", ")}. \`rostrace analyze --json\` and \`rostrace export\` have every row.` }));
  }
  if (R.streamed) {
    const m = R.streamed, S = I.sampled, n = (x) => x.toLocaleString("en-US");
    b.append(el("p", { class: "hint", "data-streamed": "", text: `Analysed slice by slice (${n(m.slices)} slices of ${dur(m.slice_ns)}): ` +
      `percentiles of more than 1,024 values within ${100 * m.percentile_relative_error}%` +
      (m.not_computed.length ? `; not computed: ${m.not_computed.join(", ")}` : "") + "." +
      (S ? ` The plots draw, in each of ${n(S.parts)} equal parts of the recording, every callback's shortest and longest run ` +
        `and every topic's fastest and slowest message, and every run longer than ${dur(S.long_ns)}: ` +
        `${n(S.runs_drawn)} of ${n(S.runs)} runs, ${n(S.flows_drawn)} of ${n(S.flows)} messages.` : "") }));
  }
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
  if (HOSTS.length > 1) {
    // Several hosts: how their clocks were aligned (docs/multi-host.md).
    const ms = (ns) => ns == null ? "" : (ns / 1e6).toFixed(3) + " ms";
    b.append(el("h4", { text: "Hosts: clocks aligned to the reference host's (offset: its clock minus the reference's)" }));
    b.append(table([
      { h: "host", f: (h) => h.host },
      { h: "traces", n: 1, f: (h) => h.traces },
      { h: "clock", f: (h) => h.source },
      { h: "offset", n: 1, f: (h) => h.source === "reference" ? "" : ms(h.offset_ns) },
      { h: "± bound", n: 1, f: (h) => h.error_ns == null ? "" : ms(Math.abs(h.error_ns)) },
      { h: "drift ppm", n: 1, f: (h) => h.drift_ppm ? h.drift_ppm.toFixed(1) : "" },
      { h: "messages in / out", n: 1, f: (h) => h.source === "reference" ? "" : `${h.messages_in} / ${h.messages_out}` },
    ], R.hosts, null, "hosts").node);
  }
  graph(b);
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
    ...(HOSTS.length > 1 ? [{ h: "host", f: (c) => c.host }] : []),
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
  // What the colours and lines mean: a colour per callback (the ten with the most time here,
  // the others in the callbacks table), grey for runs of no known callback, lines for flows.
  const top = R.callbacks.map((c, i) => [c, i]).sort((a, c) => c[0].total_ns - a[0].total_ns).slice(0, 10);
  const key = (style, text) => el("span", {}, el("i", { style }), text);
  b.append(el("div", { class: "legend", "data-legend": "timeline" },
    ...top.map(([c, i]) => key(`background:${hue(i)}`, `${c.node || "?"} ${c.topic != null ? c.topic : c.kind}`)),
    key("background:#98a2b3", "a run of no known callback"),
    key("background:none;border-top:2px solid rgba(29,35,48,0.55);height:0;border-radius:0", "message flow: publication → the callback that took it"),
    el("span", { class: "hint", text: (R.callbacks.length > 10 ? `each of the ${R.callbacks.length} callbacks has its colour; hover a run for its callback` : "") +
      (I.runs_left_out ? `; ${I.runs_left_out.toLocaleString("en-US")} runs of the callbacks left out of this page are not drawn` : "") +
      (I.flows_left_out ? `; nor ${I.flows_left_out.toLocaleString("en-US")} messages of the topics left out` : "") })));
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

// The comparison with a baseline run (rostrace diff BASE THIS): significant changes first.
function baseline() {
  const d = D.baseline;
  if (!d) return;
  const b = section("baseline", "Compared with baseline", true);
  const t = d.thresholds, n = d.changes.filter((c) => c.significant).length;
  b.append(el("p", { "data-baseline-summary": "", text: `${n} significant change(s) of ${d.changes.length} matched callbacks, topics, publisher → subscriber pairs and paths ` +
    `(p < ${t.alpha}, |Cliff's δ| ≥ ${t.min_delta}, median changed ≥ ${100 * t.min_change}%). ` +
    "Callbacks: run duration; topics and pairs: publish → callback start; paths: end to end." }));
  const ratio = (c) => (isFinite(c.median_ratio) ? "x" + c.median_ratio.toFixed(2) : "-");
  b.append(table([
    { h: "", f: (c) => (c.significant ? "CHANGED" : "same"), v: (c) => (c.significant ? 0 : 1) },
    { h: "kind", f: (c) => c.kind },
    { h: "name", w: 1, f: (c) => c.name },
    { h: "base p50", n: 1, f: (c) => st(c.base, "p50"), v: (c) => c.base.p50 },
    { h: "new p50", n: 1, f: (c) => st(c.new, "p50"), v: (c) => c.new.p50 },
    { h: "change", n: 1, f: ratio, v: (c) => c.median_ratio, t: "new median over base median" },
    { h: "base p99", n: 1, f: (c) => st(c.base, "p99"), v: (c) => c.base.p99 },
    { h: "new p99", n: 1, f: (c) => st(c.new, "p99"), v: (c) => c.new.p99 },
    { h: "rate", n: 1, f: (c) => `${c.base_rate_hz.toFixed(1)} → ${c.new_rate_hz.toFixed(1)} Hz`, v: (c) => c.new_rate_hz },
    { h: "p", n: 1, f: (c) => c.p_value.toExponential(2), v: (c) => -c.p_value, t: "Mann–Whitney U, two-sided" },
    { h: "δ", n: 1, f: (c) => (c.cliff_delta >= 0 ? "+" : "") + c.cliff_delta.toFixed(2), v: (c) => Math.abs(c.cliff_delta), t: "Cliff's delta: P(new > base) − P(new < base)" },
  ], d.changes.slice(), null, "baseline").node);
  const only = [["gone (in the baseline only)", d.removed], ["appeared (in this run only)", d.added], ["not compared (not followed in the saved run)", d.not_compared]]
    .flatMap(([what, v]) => v.map((o) => ({ what, ...o })));
  if (only.length) b.append(table([
    { h: "", f: (o) => o.what },
    { h: "kind", f: (o) => o.kind },
    { h: "name", w: 1, f: (o) => o.name },
    { h: "samples", n: 1, f: (o) => String(o.count), v: (o) => o.count },
  ], only, null, "baseline-only").node);
}

function paths() {
  const lp = R.longest_paths;
  if (!lp || !lp.paths.length) return;
  const b = section("paths", "End-to-end paths: the longest from sources to sinks", true);
  b.append(el("p", { class: "hint", text: `${lp.sources} sources (nodes whose timers publish), ${lp.sinks} sinks (subscriptions publishing nothing); click a path for its messages' latency and where the time goes; \`rostrace e2e --path ...\` has every record.` }));
  const plots = el("div", {});
  const t = table([
    { h: "path", w: 1, f: (p) => p.label },
    { h: "mean", n: 1, f: (p) => p.complete ? dur(p.latency.mean) : "-", v: (p) => p.latency.mean },
    { h: "p99", n: 1, f: (p) => p.complete ? dur(p.latency.p99) : "-", v: (p) => p.latency.p99 },
    { h: "max", n: 1, f: (p) => p.complete ? dur(p.latency.max) : "-", v: (p) => p.latency.max },
    { h: "complete", n: 1, f: (p) => `${p.complete}/${p.records}`, v: (p) => p.complete },
    { h: "superseded", n: 1, f: (p) => String(p.superseded), v: (p) => p.superseded, t: "messages replaced by a newer one before a node that publishes the latest it took used them" },
    { h: "lost", n: 1, f: (p) => String(p.lost), v: (p) => p.lost, t: "messages not taken, or not forwarded, on the way" },
  ], lp.paths.map((p, i) => Object.assign({ i }, p)), (p) => {
    plots.replaceChildren();
    const x = D.paths[p.i];
    if (!x || !x.s.length) { plots.append(el("p", { class: "hint", text: "No message went the whole way along this path." })); return; }
    if (x.segments.length) {
      plots.append(el("h4", { text: "Where the time goes (mean per segment; hover for each)" }), stackBar(x.segments.map((g) => [`${g[0]} (${g[1]})`, g[2]]), "path-segments"));
      plots.append(legend(x.segments.map((g) => g[0]), x.segments.map((g) => g[2])));
    }
    if (I.sampled) plots.append(el("p", { class: "hint", text: `Streamed: in each of ${I.sampled.parts.toLocaleString("en-US")} parts of the recording, the fastest and the slowest message that went the whole way (${x.s.length.toLocaleString("en-US")} drawn of ${p.complete.toLocaleString("en-US")}); the table's figures are those of every message. \`rostrace e2e --path ...\` has every record and segment.` }));
    const grid = el("div", { class: "plots" });
    plots.append(grid);
    series(grid, "end-to-end latency", x.s, x.lat, "path");
    messageFlow(plots, x);
    perMessage(plots, x);
    responseTime(plots, x);
  }, "paths");
  b.append(t.node, plots);
  const first = lp.paths.findIndex((p) => p.complete > 0);
  if (first >= 0) t.select(first);
}

// CARET's message-flow plot: each message that went the whole way, as a line through the
// stages of the path (x: time, y: stage).
function messageFlow(parent, x) {
  const S = x.stages.length, n = x.ms.length;
  if (S < 2 || !n) return;
  const rh = 26, label = (c) => c.replace(/\/0$/, "").replace(/_timestamp$/, "");
  const p = new Plot(parent, "Message flow: each message along the path's stages", { xTime: true, rows: true, height: S * rh + 34, ml: 260, id: "path-flow" });
  let maxd = 0; for (let i = 0; i < n; i++) maxd = Math.max(maxd, x.m[i * S + S - 1]);
  const y = (k) => 8 + k * rh + rh / 2;
  p.render = (g) => {
    const a = lowerBound(x.ms, p.x[0] - maxd / 1000), z = lowerBound(x.ms, p.x[1]);
    const step = Math.max(1, Math.floor((z - a) / 3000));
    let k = 0; g.lineWidth = 1.5;
    for (let i = a; i < z; i += step) {
      g.strokeStyle = hue(i); g.beginPath();
      for (let j = 0; j < S; j++) { const px = p.px(x.ms[i] + x.m[i * S + j] / 1000); if (j) g.lineTo(px, y(j)); else g.moveTo(px, y(j)); }
      g.stroke(); k++;
    }
    g.restore(); g.save();
    g.fillStyle = "#1d2330"; g.textAlign = "right"; g.font = "11px system-ui, sans-serif";
    x.stages.forEach((c, j) => { const s = label(c); g.fillText(s.length > 42 ? "…" + s.slice(-41) : s, p.o.ml - 6, y(j) + 4); });
    return k;
  };
  p.hover = (t, py) => {
    const j = Math.floor((py - 8) / rh);
    const i = Math.max(0, lowerBound(x.ms, t) - 1);
    return j >= 0 && j < S ? `${label(x.stages[j])}\nmessage from ${secs(x.ms[i])}: +${dur(x.m[i * S + j])}` : null;
  };
  const span = [x.ms[0], x.ms[n - 1] + maxd / 1000 + 1];
  p.set(span, [0, 1]);
}

// CARET's stacked bar, message by message: each message's latency split into its segments.
function perMessage(parent, x) {
  const S = x.stages.length, n = x.ms.length;
  if (S < 2 || !n) return;
  const p = new Plot(parent, "Latency per message, by segment", { xTime: true, yDur: true, id: "path-stack" });
  let ymax = 0; for (let i = 0; i < n; i++) ymax = Math.max(ymax, x.m[i * S + S - 1]);
  const cols = x.segments.map((_, j) => hue(j));
  p.render = (g) => {
    const a = lowerBound(x.ms, p.x[0]), z = lowerBound(x.ms, p.x[1]);
    const step = Math.max(1, Math.floor((z - a) / 4000));
    let k = 0;
    for (let i = a; i < z; i += step) {
      const x0 = p.px(x.ms[i]), next = i + step < n ? p.px(x.ms[i + step]) : x0 + 8, w = Math.max(1, Math.min(14, (next - x0) * 0.8));
      for (let j = 1; j < S; j++) {
        const y0 = p.py(x.m[i * S + j - 1]), y1 = p.py(x.m[i * S + j]);
        g.fillStyle = cols[j - 1]; g.fillRect(x0, y1, w, Math.max(0.5, y0 - y1));
      }
      k++;
    }
    return k;
  };
  p.hover = (t) => {
    const i = Math.max(0, lowerBound(x.ms, t) - 1);
    if (i >= n) return null;
    const lines = x.segments.map((sg, j) => `${sg[0]}: ${dur(x.m[i * S + j + 1] - x.m[i * S + j])}`);
    return `message from ${secs(x.ms[i])}: ${dur(x.m[i * S + S - 1])}\n` + lines.join("\n");
  };
  p.set([x.ms[0], x.ms[n - 1] + 1], [0, ymax * 1.05 || 1]);
  parent.append(legend(x.segments.map((g) => g[0])));
}

// Response time, CARET's cases: over time and as a distribution, for the case picked.
function responseTime(parent, x) {
  if (!x.rt.length) return;
  const box = el("div", { class: "plots" });
  const pick = el("div", { class: "cases" });
  const show = (k) => {
    pick.querySelectorAll("button").forEach((b, j) => b.classList.toggle("sel", j === k));
    box.replaceChildren();
    const [name, xs, ys] = x.rt[k];
    series(box, `response time (${name})`, xs, ys, "path-rt");
    box.dataset.case = name;
  };
  x.rt.forEach(([name, xs], k) => pick.append(el("button", { text: `${name} (${xs.length})`, onclick: () => show(k) })));
  parent.append(el("h4", { text: "Response time (CARET's cases: all inputs; per output its newest input (best), its oldest (worst), or the input before its oldest (worst with external latency))" }), pick, box);
  show(0);
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
  b.append(el("h4", { text: "Where a call's time goes (means: request → server callback → response)" }));
  const m = (k) => (s) => (s[k] && s[k].count ? s[k].mean : 0);
  bars(b, R.services, (s) => s.name, [["request", m("request_ns")], ["service", m("service_ns")], ["response", m("response_ns")]], "service-bars");
}

function executors() {
  if (!R.executor_threads.length) return;
  const b = section("executors", "Executor phases per thread", false);
  const rows = R.executor_threads.slice();
  const label = (e) => `${e.procname} ${e.vpid}/${e.vtid}`;
  b.append(table([
    { h: "thread", f: label },
    { h: "get next", n: 1, f: (e) => dur(e.get_next_ns), v: (e) => e.get_next_ns },
    { h: "wait", n: 1, f: (e) => dur(e.wait_ns), v: (e) => e.wait_ns },
    { h: "execute", n: 1, f: (e) => dur(e.execute_ns), v: (e) => e.execute_ns },
    { h: "executions", n: 1, f: (e) => String(e.executions), v: (e) => e.executions },
  ], rows, null, "executors").node);
  b.append(el("h4", { text: "Phase shares per thread" }));
  bars(b, R.executor_threads, label, [["get next", (e) => e.get_next_ns], ["wait", (e) => e.wait_ns], ["execute", (e) => e.execute_ns]], "executor-bars");
}

overview();
baseline();
callbacks();
timeline();
topics();
paths();
shares();
services();
executors();
document.body.dataset.rendered = "ok";
document.body.dataset.renderMs = Math.round(performance.now() - T0);
// Since navigation began: reading the file, parsing the page and the data, rendering.
document.body.dataset.openMs = Math.round(performance.now());
