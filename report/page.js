// knee report: draws the page's charts as inline SVG from the data
// embedded in it, answers the SLO explorer, and checks itself when opened
// with #knee-selfcheck. It fetches nothing: the page's content security
// policy forbids it.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("knee-data").textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var PALETTE = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00", "#b82e2e", "#316395"];
  var KNEE = { slo: "#d03030", curvature: "#7b4dc4", saturation: "#444" };

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(name, cls, text, parent) {
    var e = document.createElement(name);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  // fmt writes a number as people read it: integers as integers, three
  // significant digits otherwise, thousands separated.
  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    var a = Math.abs(v), s;
    if (a >= 100 || v === Math.round(v)) s = Math.round(v).toLocaleString("en-US");
    else if (a >= 10) s = v.toFixed(1);
    else if (a >= 1) s = v.toFixed(2);
    else s = v.toPrecision(2);
    return s;
  }

  // ticks are round values covering [lo, hi]: 1-2-5 steps on a linear
  // axis; on a log axis the decades and their 2 and 5 (or only decades
  // when they are many), plus any mark asked for (an SLO) that lies at
  // least gap (a share of the axis, 4% unless given) from every tick, so
  // its label covers none.
  // withUnit says a load with its unit: 4/s, 16 streams, 1 stream.
  function withUnit(v, unit) { return fmt(v) + (v === 1 && unit === " streams" ? " stream" : unit); }

  function ticks(lo, hi, log, marks, gap) {
    var out = [];
    if (log) {
      var d0 = Math.floor(Math.log10(lo)), d1 = Math.ceil(Math.log10(hi));
      // Within a decade, 1-2-5 may leave one tick: every digit then.
      [d1 - d0 > 4 ? [1] : [1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]].forEach(function (mult) {
        if (out.length >= 3) return;
        out = [];
        for (var d = d0; d <= d1; d++) mult.forEach(function (m) {
          var v = m * Math.pow(10, d);
          if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
        });
      });
    } else {
      var span = hi - lo, raw = span / 6, mag = Math.pow(10, Math.floor(Math.log10(raw || 1)));
      var step = [1, 2, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return s >= raw; });
      for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    }
    var at = function (v) { return log ? Math.log10(v) : v; }, span = at(hi) - at(lo) || 1;
    (marks || []).forEach(function (m) {
      if (m >= lo && m <= hi && !out.some(function (t) { return Math.abs(at(t) - at(m)) / span < (gap || 0.04); })) out.push(m);
    });
    return out.sort(function (a, b) { return a - b; });
  }

  // lineChart draws series of [x, y] points with optional horizontal
  // lines (an SLO) and vertical marks (knees); the legend goes under the
  // chart, never over the data; hovering reads the values at a point.
  function lineChart(parent, spec) {
    var box = html("figure", "chart", undefined, parent);
    box.id = spec.id;
    html("figcaption", "", spec.title, box);
    // The drawing is as wide as its box (one unit a CSS pixel), so text
    // is the size the style says at any width; 640 where the box is not
    // laid out (hidden, or printed).
    var inner = box.clientWidth - 18;
    var W = inner >= 280 ? Math.round(inner) : 640, H = Math.round(Math.min(340, Math.max(230, W * 0.55))), L = 62, R = 16, T = 14, B = 42;
    var xs = [], ys = [];
    spec.series.forEach(function (s) { s.points.forEach(function (p) { if (isFinite(p[1]) && (!spec.ylog || p[1] > 0)) { xs.push(p[0]); ys.push(p[1]); } }); });
    spec.series.forEach(function (s) { (s.ci || []).forEach(function (c) { if (!spec.ylog || c[1] > 0) ys.push(c[1], c[2]); }); });
    (spec.hlines || []).forEach(function (h) { ys.push(h.y); });
    if (!xs.length) { html("p", "note", "no data to draw", box); return box; }
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    (spec.vlines || []).forEach(function (v) { x0 = Math.min(x0, v.x); x1 = Math.max(x1, v.x); });
    var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    var ylog = spec.ylog === undefined ? (y0 > 0 && y1 / y0 > 30) : spec.ylog;
    var xlog = !!spec.xlog;
    if (!ylog) { y0 = Math.min(0, y0); y1 = y1 * 1.08 || 1; } else { y0 = Math.max(y0 / 1.3, spec.yfloor || 0, y1 / 1e5); y1 = y1 * 1.3; }
    if (x0 === x1) { x0 = x0 * 0.9 - (x0 ? 0 : 1); x1 = x1 * 1.1 + (x1 ? 0 : 1); }
    // The y ticks, an SLO's among them where its label has room (a
    // label's height, 14 px), and a left margin their widest label and
    // the axis title beside it fit in (7 px a character).
    var yt = ticks(y0, y1, ylog, (spec.hlines || []).map(function (h) { return h.y; }), 14 / (H - T - B));
    L = Math.max(L, 30 + 7 * Math.max.apply(null, yt.map(function (t) { return fmt(t).length; })));
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": spec.title, preserveAspectRatio: "xMidYMid meet" }, box);
    var fx = function (x) { return xlog ? Math.log10(x) : x; }, fy = function (y) { return ylog ? Math.log10(y) : y; };
    var sx = function (x) { return L + (fx(x) - fx(x0)) / (fx(x1) - fx(x0)) * (W - L - R); };
    var sy = function (y) { return H - B - (fy(y) - fy(y0)) / (fy(y1) - fy(y0)) * (H - T - B); };
    var g = el("g", { class: "axes" }, svg);
    yt.forEach(function (t) {
      el("line", { x1: L, x2: W - R, y1: sy(t), y2: sy(t), class: "grid" }, g);
      el("text", { x: L - 6, y: sy(t) + 4, "text-anchor": "end", class: "tick" }, g).textContent = fmt(t);
    });
    var xt = spec.xticks || ticks(x0, x1, xlog);
    xt.forEach(function (t) {
      var v = typeof t === "object" ? t.v : t, label = typeof t === "object" ? t.label : fmt(t);
      if (v < x0 || v > x1) return;
      el("line", { x1: sx(v), x2: sx(v), y1: H - B, y2: H - B + 4, class: "axis" }, g);
      el("text", { x: sx(v), y: H - B + 19, "text-anchor": "middle", class: "tick" }, g).textContent = label;
    });
    el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }, g);
    el("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }, g);
    el("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", class: "label" }, g).textContent = spec.xlabel;
    el("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", class: "label", transform: "rotate(-90 14 " + (T + H - B) / 2 + ")" }, g).textContent = spec.ylabel;
    (spec.hlines || []).forEach(function (h) {
      el("line", { x1: L, x2: W - R, y1: sy(h.y), y2: sy(h.y), class: "slo" }, svg);
    });
    // Knees: each a vertical line; knees at one load share it, their
    // labels stacked so none covers another.
    // Knees: each a vertical line; a label goes on the first row where
    // it covers no other (its width estimated from its length).
    var lines = {}, placed = [];
    (spec.vlines || []).forEach(function (v) {
      var x = sx(v.x), k = x.toFixed(0);
      if (!lines[k]) { lines[k] = true; el("line", { x1: x, x2: x, y1: T, y2: H - B, class: "knee", stroke: KNEE[v.kind] || "#888" }, svg); }
      var w = 7 * v.label.length + 8, right = x + w < W - R;
      var a = right ? x : x - w, b = right ? x + w : x, row = 0;
      while (placed.some(function (p) { return p.row === row && p.a < b && a < p.b; })) row++;
      placed.push({ a: a, b: b, row: row });
      el("text", { x: x + (right ? 4 : -4), y: T + 12 + 15 * row, "text-anchor": right ? "start" : "end", class: "kneelabel", fill: KNEE[v.kind] || "#888" }, svg).textContent = v.label;
    });
    var drawn = [];
    spec.series.forEach(function (s, i) {
      var color = s.color || PALETTE[i % PALETTE.length];
      // On a log axis, values under its floor sit on it (the hover still
      // reads the value).
      var pts = s.points.filter(function (p) { return isFinite(p[1]) && (!ylog || p[1] > 0); }).map(function (p) { return ylog && p[1] < y0 ? [p[0], y0, p[2], p[1]] : p; });
      var d = "", kept = s.connectAll ? pts : pts.filter(function (p) { return !p[2]; });
      kept.forEach(function (p, j) { d += (j ? "L" : "M") + sx(p[0]).toFixed(1) + " " + sy(p[1]).toFixed(1); });
      if (d) el("path", { d: d, class: "series", stroke: color, "stroke-dasharray": s.dash || "none" }, svg);
      // A repeated level's 95% interval across its repeats: a bar with
      // caps, so overlaid sweeps show whether their curves differ.
      (s.ci || []).forEach(function (c) {
        var x = sx(c[0]), lo = sy(Math.max(c[1], y0)), hi = sy(Math.min(c[2], y1));
        el("path", { d: "M" + x + " " + lo + "V" + hi + "M" + (x - 4) + " " + lo + "h8M" + (x - 4) + " " + hi + "h8", class: "ci", stroke: color }, svg);
      });
      pts.forEach(function (p) {
        // Markers on measured levels, not on dense curves.
        if (pts.length > 40 && !p[2]) return;
        el("circle", { cx: sx(p[0]).toFixed(1), cy: sy(p[1]).toFixed(1), r: p[2] ? 3.5 : 3, class: p[2] ? "point excluded" : "point", stroke: color, fill: p[2] ? "none" : color }, svg);
      });
      drawn.push({ name: s.name, color: color, pts: pts, dash: s.dash, connectAll: s.connectAll, ci: s.ci && s.ci.length });
    });
    var legend = html("ul", "legend", undefined, box);
    drawn.forEach(function (s) {
      var li = html("li", "", undefined, legend), sw = html("span", "swatch", undefined, li);
      sw.style.borderColor = s.color;
      if (s.dash) sw.style.borderStyle = "dashed";
      li.appendChild(document.createTextNode(s.name));
    });
    if (drawn.some(function (s) { return s.ci; })) html("li", "slo-legend", "bars: 95% interval across repeats", legend);
    (spec.hlines || []).forEach(function (h) { html("li", "slo-legend", "– – " + h.label, legend); });
    if (spec.note) html("p", "note", spec.note, box);
    // Hover: the values of every series at the nearest x.
    var cross = el("line", { y1: T, y2: H - B, class: "cross", visibility: "hidden" }, svg);
    var tip = html("div", "tip", undefined, box);
    tip.hidden = true;
    svg.addEventListener("mousemove", function (ev) {
      var r = svg.getBoundingClientRect(), px = (ev.clientX - r.left) / r.width * W;
      var best = null;
      drawn.forEach(function (s) { s.pts.forEach(function (p) { if (best === null || Math.abs(sx(p[0]) - px) < Math.abs(sx(best) - px)) best = p[0]; }); });
      if (best === null) return;
      cross.setAttribute("x1", sx(best)); cross.setAttribute("x2", sx(best)); cross.setAttribute("visibility", "visible");
      var lines = [spec.xname + " " + fmt(best) + (spec.xunit || "")];
      drawn.forEach(function (s) { s.pts.forEach(function (p) { if (p[0] === best) lines.push(s.name + ": " + fmt(p.length > 3 ? p[3] : p[1]) + (spec.yunit || "") + (p[2] ? " (excluded: " + p[2] + ")" : "")); }); });
      tip.textContent = lines.join("\n");
      tip.hidden = false;
      tip.style.left = Math.min(r.width - 220, Math.max(0, ev.clientX - r.left + 12)) + "px";
    });
    svg.addEventListener("mouseleave", function () { tip.hidden = true; cross.setAttribute("visibility", "hidden"); });
    return box;
  }

  // barChart draws labelled horizontal bars.
  function barChart(parent, spec) {
    var box = html("figure", "chart", undefined, parent);
    box.id = spec.id;
    html("figcaption", "", spec.title, box);
    // As wide as its box, as lineChart; labels take up to 40% of it.
    var inner = box.clientWidth - 18, W = inner >= 280 ? Math.round(inner) : 640;
    var longest = Math.max.apply(null, spec.bars.map(function (b) { return String(b.label).length; }));
    var L = Math.min(Math.round(W * 0.4), 7 * longest + 16);
    // A label too long for its room goes on two lines, split at its last
    // " · ", rather than past the chart's left edge.
    var lines = spec.bars.map(function (b) {
      var t = String(b.label), at = t.lastIndexOf(" · ");
      return 7 * t.length + 16 > L && at > 0 ? [t.slice(0, at), t.slice(at + 3)] : [t];
    });
    var two = lines.some(function (l) { return l.length > 1; }), row = two ? 36 : 26, H = 20 + row * spec.bars.length;
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": spec.title }, box);
    var max = Math.max.apply(null, spec.bars.map(function (b) { return b.value || 0; })) || 1;
    spec.bars.forEach(function (b, i) {
      var y = 10 + i * row + (two ? 5 : 0), w = (W - L - 90) * (b.value || 0) / max;
      var label = el("text", { x: L - 8, y: lines[i].length > 1 ? y + 9 : y + 15, "text-anchor": "end", class: "tick" }, svg);
      lines[i].forEach(function (part, k) { el("tspan", { x: L - 8, dy: k ? 12 : 0 }, label).textContent = part; });
      el("rect", { x: L, y: y + 3, width: Math.max(w, 1), height: row - 8, class: "bar", fill: b.color || PALETTE[0] }, svg);
      el("text", { x: L + w + 6, y: y + 15, class: "tick" }, svg).textContent = (spec.decimals === undefined ? fmt(b.value) : b.value.toFixed(spec.decimals)) + (spec.unit || "");
    });
    return box;
  }

  var METRICS = { ttft: "TTFT", ttft_sched: "TTFT from schedule", ttfat: "TTFAT (first answer token)", ttfat_sched: "TTFAT from schedule", itl: "ITL", tpot: "TPOT", e2e: "E2E", e2e_sched: "E2E from schedule", queue_wait: "queue wait" };
  var PCTS = ["p50", "p90", "p95", "p99"];

  function kneeLines(s) {
    return (s.knees || []).map(function (k) { return { x: k.load, kind: k.kind, label: k.short }; });
  }
  function levelPoints(s, f) {
    return s.levels.map(function (l) { return [l.load, f(l), l.excluded || ""]; }).filter(function (p) { return p[1] !== null && p[1] !== undefined; });
  }
  // levelCI are a sweep's repeated levels' intervals of a figure, as
  // [load, low, high]; a low under 0 (a wide t interval on few repeats)
  // drawn from 0, where no latency or rate goes.
  function levelCI(s, figure) {
    return s.levels.filter(function (l) { return l.ci && l.ci[figure] && !l.excluded; }).map(function (l) { return [l.load, Math.max(l.ci[figure][0], 0), l.ci[figure][1]]; });
  }
  function stat(l, metric, pct) { return l.stats && l.stats[metric] ? l.stats[metric][pct] : null; }

  // sweepCharts are one sweep's panels against load.
  function sweepCharts(parent, s, idx) {
    var grid = html("div", "charts", undefined, parent);
    // The curvature knee is a bend of the SLO metric's curve: it is drawn
    // on that chart alone, not on six others where nothing bends there.
    var vl = kneeLines(s), xn = s.axis === "rate" ? "load" : "streams";
    var noCurve = vl.filter(function (k) { return k.kind !== "curvature"; });
    var base = { xlabel: s.axisLabel, xname: xn, xunit: s.unit, yunit: " ms", vlines: noCurve, xticks: s.levels.map(function (l) { return l.load; }) };
    ["ttft", "ttft_sched", "itl", "tpot", "e2e"].forEach(function (m) {
      var series = PCTS.map(function (p, i) { return { name: p, points: levelPoints(s, function (l) { return stat(l, m, p); }), color: PALETTE[i], ci: levelCI(s, m + "." + p) }; });
      if (!series.some(function (x) { return x.points.length; })) return;
      var spec = Object.assign({}, base, { id: "s" + idx + "-" + m, title: METRICS[m] + " against load", ylabel: METRICS[m] + " (ms)", series: series,
        vlines: s.slo && s.slo.metric === m ? vl : noCurve });
      if (s.slo && s.slo.metric === m && s.slo.ms > 0) spec.hlines = [{ y: s.slo.ms, label: "SLO: p" + s.slo.percentile + " ≤ " + fmt(s.slo.ms) + " ms" }];
      lineChart(grid, spec);
    });
    lineChart(grid, Object.assign({}, base, { id: "s" + idx + "-throughput", title: "Throughput against load", ylabel: "per second", yunit: "/s", ylog: false,
      series: [{ name: "completions/s", points: levelPoints(s, function (l) { return l.reqPerS; }) },
        { name: "offered/s", points: levelPoints(s, function (l) { return l.offered || null; }), dash: "5 4", color: "#888" }] }));
    var tokens = s.tokens || "output";
    lineChart(grid, Object.assign({}, base, { id: "s" + idx + "-tokens", title: tokens.charAt(0).toUpperCase() + tokens.slice(1) + " tokens against load", ylabel: "tokens/s", yunit: " tok/s", ylog: false,
      series: [{ name: tokens + " tokens/s", points: levelPoints(s, function (l) { return l.tokPerS; }), color: PALETTE[3] }] }));
    if (s.levels.some(function (l) { return l.goodput !== null && l.goodput !== undefined; }))
      lineChart(grid, Object.assign({}, base, { id: "s" + idx + "-goodput", title: "Goodput against load", ylabel: "good requests (%)", yunit: "%", ylog: false,
        series: [{ name: "good %", points: levelPoints(s, function (l) { return l.goodput; }), color: PALETTE[4] }],
        hlines: s.slo && s.slo.minGood ? [{ y: s.slo.minGood, label: "SLO: ≥ " + fmt(s.slo.minGood) + "% good" }] : [] }));
    if (s.levels.some(function (l) { return l.cacheHit !== null && l.cacheHit !== undefined; }))
      lineChart(grid, Object.assign({}, base, { id: "s" + idx + "-cache", title: "Prefix-cache hit against load", ylabel: "hit rate (%)", yunit: "%", ylog: false,
        series: [{ name: "cached share of prompt tokens", points: levelPoints(s, function (l) { return l.cacheHit; }), color: PALETTE[5] }] }));
    sweepSliceCharts(grid, s, idx);
  }

  // PTICKS place percentiles on a -log10(1-p) axis.
  function px(p) { return -Math.log10(Math.max(1 - p / 100, 1e-4)); }
  var PTICKS = [0, 50, 90, 99, 99.9].map(function (p) { return { v: px(p), label: "p" + p }; });

  // distChart draws percentile curves, one per level or run.
  function distChart(parent, id, title, curves) {
    // A latency under 10 µs is below what a clock across a network can
    // tell apart: the axis stops there.
    return lineChart(parent, { id: id, title: title, xlabel: "percentile", xname: "", ylabel: "ms", yunit: " ms", xticks: PTICKS, ylog: true, yfloor: 0.01,
      series: curves.map(function (c) { return { name: c.name, dash: c.dash, points: c.points.map(function (q) { return [px(q[0]), q[1]]; }) }; }) });
  }

  function sweepDistributions(parent, s, idx) {
    var metrics = ["ttft", "ttft_sched", "itl", "e2e"].filter(function (m) { return s.levels.some(function (l) { return l.dist && l.dist[m]; }); });
    if (!metrics.length) return;
    var wrap = html("div", "dist", undefined, parent);
    var label = html("label", "", "distribution of ", wrap);
    var sel = html("select", "", undefined, label);
    sel.id = "s" + idx + "-dist-metric";
    metrics.forEach(function (m) { var o = html("option", "", METRICS[m], sel); o.value = m; });
    var holder = html("div", "charts", undefined, wrap);
    function draw() {
      holder.textContent = "";
      var m = sel.value;
      distChart(holder, "s" + idx + "-dist", METRICS[m] + " by percentile, per level", s.levels.filter(function (l) { return l.dist && l.dist[m]; }).map(function (l) {
        return { name: withUnit(l.load, s.unit) + (l.excluded ? " (excluded)" : ""), points: l.dist[m] };
      }));
    }
    sel.addEventListener("change", draw);
    draw();
  }

  // explore finds the largest load at which a percentile of a metric stays
  // within a bound: the last measured level that meets it, or between it
  // and the next, which does not, by linear interpolation (said so, as an
  // estimate no level measured).
  // A level the sweep judged misses a bound when the sweep's own verdict
  // says it misses whatever the bound (its gate: errors, lost requests, a
  // queue that fell behind), when the bound is the sweep's own SLO and
  // the verdict says it misses, or when its figure is past the bound. The
  // page never judges a level otherwise than the knee beside it.
  function explore(s, metric, pct, bound) {
    var own = s.slo && s.slo.metric === metric && "p" + s.slo.percentile === pct && s.slo.ms === bound;
    var pts = s.levels.filter(function (l) { return l.judged; }).map(function (l) {
      var v = stat(l, metric, pct);
      return { load: l.load, v: v, gate: l.gate, miss: !!l.gate || (own && !l.meets) || v === null || v === undefined || v > bound };
    }).filter(function (p) { return p.gate || (p.v !== null && p.v !== undefined); }).sort(function (a, b) { return a.load - b.load; });
    if (!pts.length) return { text: "no level measured " + METRICS[metric] };
    function why(p) { return p.gate ? "misses the SLO whatever the bound (" + p.gate + ")" : "has " + METRICS[metric] + " " + pct + " " + fmt(p.v) + " ms"; }
    if (pts[0].miss) return { load: 0, text: "none: the lightest level judged (" + withUnit(pts[0].load, s.unit) + ") " + why(pts[0]) };
    for (var i = 1; i < pts.length; i++) {
      if (!pts[i].miss) continue;
      var a = pts[i - 1], b = pts[i];
      if (b.gate || !(b.v > bound) || !(b.v > a.v)) {
        return { load: a.load, text: "at least " + withUnit(a.load, s.unit) + ": the next level judged (" + withUnit(b.load, s.unit) + ") " + why(b) };
      }
      var load = a.load + (bound - a.v) / (b.v - a.v) * (b.load - a.load);
      return { load: load, interpolated: true, text: "about " + withUnit(load, s.unit) + ", interpolated on a straight line between the level at " + withUnit(a.load, s.unit) + ", which meets it, and the level at " + withUnit(b.load, s.unit) + ", which does not: no level was measured there, so measure near it before planning on it" };
    }
    var last = pts[pts.length - 1];
    return { load: last.load, text: "at least " + withUnit(last.load, s.unit) + ": every level judged meets it; the limit lies above" };
  }

  function explorer(parent, s, idx) {
    var box = html("div", "explorer", undefined, parent);
    box.id = "s" + idx + "-explorer";
    html("h4", "", "SLO explorer", box);
    var form = html("div", "controls", undefined, box);
    var msel = html("select", "", undefined, html("label", "", "metric ", form));
    Object.keys(METRICS).forEach(function (m) { if (s.levels.some(function (l) { return stat(l, m, "p50") !== null && stat(l, m, "p50") !== undefined; })) { var o = html("option", "", METRICS[m], msel); o.value = m; } });
    var psel = html("select", "", undefined, html("label", "", "percentile ", form));
    PCTS.forEach(function (p) { var o = html("option", "", p, psel); o.value = p; });
    var bound = html("input", "", undefined, html("label", "", "bound (ms) ", form));
    bound.type = "number"; bound.min = "0"; bound.step = "any";
    if (s.slo && s.slo.ms > 0) { msel.value = s.slo.metric; psel.value = "p" + s.slo.percentile; bound.value = s.slo.ms; } else { psel.value = "p95"; bound.value = 500; }
    msel.className = "explore-metric"; psel.className = "explore-pct"; bound.className = "explore-bound";
    var out = html("p", "answer", undefined, box);
    html("p", "note", "knee's own SLO knee: " + (s.sloKnee || "none"), box);
    function run() {
      var r = explore(s, msel.value, psel.value, parseFloat(bound.value));
      out.textContent = "largest load meeting " + METRICS[msel.value] + " " + psel.value + " ≤ " + bound.value + " ms: " + r.text;
      out.dataset.load = r.load === undefined ? "" : r.load;
      return r;
    }
    [msel, psel, bound].forEach(function (c) { c.addEventListener("input", run); c.addEventListener("change", run); });
    run();
    box.run = function (m, p, b) { msel.value = m; psel.value = p; bound.value = b; return run(); };
  }

  // compareCharts overlay the sweeps per metric, at the SLO's percentile;
  // each sweep's name says whether it was predicted or measured, the SLO
  // metric's chart draws each sweep's bound, and a curvature knee is drawn
  // on that chart alone (it is a bend of that metric's curve).
  function compareCharts(parent, sweeps) {
    var grid = html("div", "charts", undefined, parent);
    var pct = "p" + ((sweeps[0].slo && sweeps[0].slo.percentile) || 95);
    var name = function (s) { return s.label + (s.source ? " (" + s.source + ")" : ""); };
    var knees = function (m) {
      var vl = [];
      sweeps.forEach(function (s) {
        (s.knees || []).forEach(function (k) {
          if (k.kind === "curvature" && !(s.slo && s.slo.metric === m)) return;
          vl.push({ x: k.load, kind: k.kind, label: s.label + ": " + k.short });
        });
      });
      return vl;
    };
    ["ttft_sched", "ttft", "tpot", "e2e"].forEach(function (m) {
      var series = sweeps.map(function (s, i) { return { name: name(s), points: levelPoints(s, function (l) { return stat(l, m, pct); }), color: PALETTE[i % PALETTE.length], ci: levelCI(s, m + "." + pct) }; });
      if (!series.some(function (x) { return x.points.length; })) return;
      // One line per bound, naming its sweeps unless all share it.
      var byMs = {}, order = [];
      sweeps.forEach(function (s) {
        if (!s.slo || s.slo.metric !== m || !(s.slo.ms > 0) || "p" + s.slo.percentile !== pct) return;
        if (!byMs[s.slo.ms]) { byMs[s.slo.ms] = []; order.push(s.slo.ms); }
        byMs[s.slo.ms].push(s.label);
      });
      var hl = order.map(function (ms) {
        var who = byMs[ms].length === sweeps.length ? "" : " of " + byMs[ms].join(", ");
        return { y: ms, label: "SLO" + who + ": " + pct + " ≤ " + fmt(ms) + " ms" };
      });
      lineChart(grid, { id: "cmp-" + m, title: METRICS[m] + " " + pct + " against load", xlabel: sweeps[0].axisLabel, xname: "load", xunit: sweeps[0].unit, ylabel: "ms", yunit: " ms", series: series, vlines: knees(m), hlines: hl });
    });
    lineChart(grid, { id: "cmp-throughput", title: "Throughput against load", xlabel: sweeps[0].axisLabel, xname: "load", xunit: sweeps[0].unit, ylabel: "completions/s", yunit: "/s", ylog: false,
      series: sweeps.map(function (s, i) { return { name: name(s), points: levelPoints(s, function (l) { return l.reqPerS; }), color: PALETTE[i % PALETTE.length], ci: levelCI(s, "throughput") }; }) });
  }

  // slicePoints are one series of a level's slices, [] when absent or
  // too few to show a trend: fewer than four slices are two or three
  // points a line would join into one.
  var MIN_SLICES = 4;
  function slicePoints(sl, name) {
    var pts = sl && sl.series && sl.series[name] ? sl.series[name] : [];
    return pts.length >= MIN_SLICES ? pts : [];
  }
  var SLICE_BASE = { xlabel: "seconds into the window (each slice's end)", xname: "t", xunit: " s" };

  // sliceLatency is the latency slices are drawn by: TTFT, or a pooling
  // endpoint's E2E (its answer is one body).
  function sliceLatency(sl) {
    return sl && sl.latency === "e2e_sched" ? { key: "e2e_sched", name: "E2E" } : { key: "ttft_sched", name: "TTFT" };
  }

  // runSliceCharts are a run's slices: its latencies from the schedule,
  // then the server's gauges under them.
  function runSliceCharts(grid, sl, idx) {
    if (!sl) return;
    var m = sliceLatency(sl);
    var lat = ["p50", "p95", "p99"].map(function (p, i) { return { name: m.name + " sched " + p, points: slicePoints(sl, m.key + "." + p), color: PALETTE[i] }; }).filter(function (x) { return x.points.length; });
    if (lat.length)
      lineChart(grid, Object.assign({}, SLICE_BASE, { id: "r" + idx + "-slices-ttft", title: m.name + " from schedule, slice by slice (" + fmt(sl.width) + " s)", ylabel: "ms", yunit: " ms", series: lat }));
    var gauges = [["waiting", "waiting", PALETTE[1]], ["running", "running", PALETTE[0]]].map(function (g) { return { name: g[1], points: slicePoints(sl, g[0]), color: g[2] }; }).filter(function (x) { return x.points.length; });
    if (gauges.length)
      lineChart(grid, Object.assign({}, SLICE_BASE, { id: "r" + idx + "-slices-server", title: "The server's requests at each slice's end", ylabel: "requests", yunit: "", ylog: false, series: gauges }));
    if (slicePoints(sl, "kv_cache_usage").length)
      lineChart(grid, Object.assign({}, SLICE_BASE, { id: "r" + idx + "-slices-kv", title: "The server's KV cache in use at each slice's end", ylabel: "in use (%)", yunit: "%", ylog: false,
        series: [{ name: "KV cache", points: slicePoints(sl, "kv_cache_usage"), color: PALETTE[5] }] }));
  }

  // sweepSliceCharts set every level's slices side by side: TTFT p95
  // from the schedule through each window, and the server's queue under
  // it, so a level that never settled shows as a rising line.
  function sweepSliceCharts(grid, s, idx) {
    var levels = s.levels.filter(function (l) { return l.slices; });
    if (!levels.length) return;
    var per = function (name) { return levels.map(function (l, i) { return { name: withUnit(l.load, s.unit), points: slicePoints(l.slices, name), color: PALETTE[i % PALETTE.length] }; }).filter(function (x) { return x.points.length; }); };
    var m = sliceLatency(levels[0].slices);
    var lat = per(m.key + ".p95");
    if (lat.length)
      lineChart(grid, Object.assign({}, SLICE_BASE, { id: "s" + idx + "-slices-ttft", title: m.name + " p95 from schedule through each level's window", ylabel: "ms", yunit: " ms", series: lat }));
    var queue = per("waiting");
    if (queue.length)
      lineChart(grid, Object.assign({}, SLICE_BASE, { id: "s" + idx + "-slices-waiting", title: "The server's waiting requests through each level's window", ylabel: "waiting", yunit: "", ylog: false, series: queue }));
  }

  function runCharts(parent, r, idx) {
    var grid = html("div", "charts", undefined, parent);
    // TTFT from schedule first and TTFT dashed over it: where no request
    // waited to be sent the two are one, and both stay in view.
    var curves = [["ttft_sched", "TTFT from schedule"], ["ttft", "TTFT", "6 4"], ["itl", "ITL"], ["e2e", "E2E"], ["ttfat", "TTFAT (first answer token)"]].filter(function (m) { return r.dist && r.dist[m[0]]; });
    if (curves.length) distChart(grid, "r" + idx + "-dist", "Latency by percentile", curves.map(function (m) { return { name: m[1], points: r.dist[m[0]], dash: m[2] }; }));
    if (r.timeline && r.timeline.t.length) {
      var t = r.timeline;
      lineChart(grid, { id: "r" + idx + "-timeline", title: "Sends, completions and requests in flight over the window", xlabel: "seconds into the run", xname: "t", xunit: " s", ylabel: "per second, or in flight", ylog: false,
        series: [{ name: "sent/s", points: t.t.map(function (x, i) { return [x, t.sent[i]]; }) }, { name: "completed/s", points: t.t.map(function (x, i) { return [x, t.done[i]]; }) },
          { name: "in flight", points: t.t.map(function (x, i) { return [x, t.inflight[i]]; }), dash: "4 3" }] });
    } else if (r.rates) {
      barChart(grid, { id: "r" + idx + "-rates", title: "Rates of the window (a timeline needs knee report --records)", unit: "/s", bars: r.rates });
    }
    if (r.classTTFT)
      barChart(grid, { id: "r" + idx + "-classes-ttft", title: "TTFT p95 from schedule by class", unit: " ms", bars: r.classTTFT });
    if (r.classGood)
      barChart(grid, { id: "r" + idx + "-classes-good", title: "Goodput by class (share meeting its own SLO)", unit: "%", bars: r.classGood });
    runSliceCharts(grid, r.slices, idx);
    repeatSliceCharts(grid, r.repeatSlices, idx);
  }

  // repeatSliceCharts set a repeated run's repeats side by side, slice by
  // slice: TTFT p95 from the schedule and the server's queue through each
  // repeat's window, so drift between repeats shows.
  function repeatSliceCharts(grid, reps, idx) {
    if (!reps || !reps.length) return;
    var per = function (name) { return reps.map(function (sl, i) { return { name: "repeat " + (i + 1), points: slicePoints(sl, name), color: PALETTE[i % PALETTE.length] }; }).filter(function (x) { return x.points.length; }); };
    var m = sliceLatency(reps[0]);
    var lat = per(m.key + ".p95");
    if (lat.length)
      lineChart(grid, Object.assign({}, SLICE_BASE, { id: "r" + idx + "-repeat-slices-ttft", title: m.name + " p95 from schedule through each repeat's window", ylabel: "ms", yunit: " ms", series: lat }));
    var queue = per("waiting");
    if (queue.length)
      lineChart(grid, Object.assign({}, SLICE_BASE, { id: "r" + idx + "-repeat-slices-waiting", title: "The server's waiting requests through each repeat's window", ylabel: "waiting", yunit: "", ylog: false, series: queue }));
  }

  // dayCharts are a day plan's minutes: the rate, each policy's replicas
  // (serving and loading) and its share of arrivals meeting the SLO.
  function dayCharts(parent, d) {
    if (!parent) return;
    var base = { xlabel: "minutes from the start", xname: "minute", xunit: "", ylog: false };
    var pts = function (ys) { return ys.map(function (y, i) { return [i, y]; }); };
    lineChart(parent, Object.assign({}, base, { id: "day-rate", title: "Arrival rate through the day", ylabel: "per second", yunit: "/s",
      series: [{ name: "rate", points: pts(d.rate), color: "#888" }] }));
    lineChart(parent, Object.assign({}, base, { id: "day-replicas", title: "Replicas held (serving and loading)", ylabel: "replicas", yunit: "",
      series: d.policies.map(function (p, i) { return { name: p.name, points: pts(p.replicas), color: PALETTE[i % PALETTE.length] }; }) }));
    lineChart(parent, Object.assign({}, base, { id: "day-attainment", title: "Arrivals meeting the SLO, minute by minute", ylabel: "met (%)", yunit: "%",
      series: d.policies.map(function (p, i) { return { name: p.name, points: pts(p.attainment), color: PALETTE[i % PALETTE.length] }; }) }));
  }

  function planCharts(parent, p) {
    var rows = p.rows.filter(function (r) { return r.meets && r.costPerHour > 0; }).slice(0, 12);
    if (rows.length) barChart(parent, { id: "plan-cost", title: "Cost per hour of the configurations meeting the SLO", unit: " $/h", decimals: 2, bars: rows.map(function (r) { return { label: r.label, value: r.costPerHour }; }) });
    var head = p.rows.filter(function (r) { return r.meets; }).slice(0, 12);
    if (head.length) barChart(parent, { id: "plan-headroom", title: "Headroom: the largest load each still meets", unit: p.unit, bars: head.map(function (r, i) { return { label: r.label, value: r.headroom, color: PALETTE[3] }; }) });
  }

  // figureTitle says a file's figure (ttft_p50_ms) as the charts say
  // latencies (TTFT p50, ms).
  function figureTitle(m) {
    var g = /^(.*)_(p\d+|mean)_ms$/.exec(m);
    if (g && METRICS[g[1]]) return METRICS[g[1]] + " " + g[2] + ", ms";
    return m === "output_tokens_per_s" ? "output tokens/s" : m;
  }

  function calCharts(parent, c) {
    var grid = html("div", "charts", undefined, parent);
    c.metrics.forEach(function (m, i) {
      var pts = function (f) { return c.levels.filter(function (l) { return l.values[m]; }).map(function (l) { return [l.load, f(l.values[m]), l.heldOut ? "held out of the fit" : ""]; }); };
      lineChart(grid, { id: "cal-" + m, title: figureTitle(m) + ": measured, start and fit (hollow: held out)", xlabel: "load", xname: "load", ylabel: figureTitle(m), ylog: false,
        xticks: c.levels.map(function (l) { return l.load; }),
        series: [{ name: "measured", points: pts(function (v) { return v[0]; }), color: "#888", connectAll: true },
          { name: "start", points: pts(function (v) { return v[1]; }), dash: "5 4", color: PALETTE[1], connectAll: true },
          { name: "fitted", points: pts(function (v) { return v[2]; }), color: PALETTE[0], connectAll: true }] });
    });
  }

  (data.sweeps || []).forEach(function (s, i) {
    var at = document.getElementById("sweep-charts-" + i);
    if (!at) return;
    explorer(at, s, i);
    sweepCharts(at, s, i);
    sweepDistributions(at, s, i);
  });
  if (data.compare) compareCharts(document.getElementById("compare-charts"), data.sweeps);
  (data.runs || []).forEach(function (r, i) { var at = document.getElementById("run-charts-" + i); if (at) runCharts(at, r, i); });
  if (data.plan) planCharts(document.getElementById("plan-charts"), data.plan);
  if (data.plan && data.plan.day) dayCharts(document.getElementById("day-charts"), data.plan.day);
  if (data.calibration) calCharts(document.getElementById("cal-charts"), data.calibration);

  // A live view follows the run's events: progress in place, a finished
  // level by redrawing the page, the end by becoming the report.
  // Under the status, the progress over time: the recent latencies and
  // the rates, from the history the page came with and every event since.
  function liveCharts(parent, hist) {
    parent.textContent = "";
    if (hist.length < 2) return;
    var t = function (f) { return hist.map(function (s) { return [s.elapsedS, f(s)]; }).filter(function (p) { return p[1] !== null; }); };
    var base = { xlabel: "seconds into the level", xname: "t", xunit: " s" };
    lineChart(parent, Object.assign({ id: "live-latency", title: "TTFT from schedule and ITL over the last 5 s", ylabel: "ms", yunit: " ms", ylog: false,
      series: [{ name: "TTFT sched p50", points: t(function (s) { return s.recentCount ? s.ttftP50 : null; }) },
        { name: "TTFT sched p95", points: t(function (s) { return s.recentCount ? s.ttftP95 : null; }) },
        { name: "ITL p50", points: t(function (s) { return s.recentCount ? s.itlP50 : null; }) }] }, base));
    lineChart(parent, Object.assign({ id: "live-rates", title: "Sent per second and requests in flight", ylabel: "per second, or in flight", ylog: false,
      series: [{ name: "sent/s", points: t(function (s) { return s.sentPerS; }) },
        { name: "in flight", points: t(function (s) { return s.inFlight; }), dash: "4 3" }] }, base));
    // The server's gauges under the client's latencies, each reading once
    // (two beats may carry the same one), at the instant it was read.
    var g = function (key) {
      var out = [], at = -1;
      hist.forEach(function (s) { if (s[key] !== undefined && s.serverAtS !== at) { at = s.serverAtS; out.push([s.serverAtS, s[key]]); } });
      return out;
    };
    var gauges = [["serverRunning", "running", PALETTE[0]], ["serverWaiting", "waiting", PALETTE[1]]].map(function (x) { return { name: x[1], points: g(x[0]), color: x[2] }; }).filter(function (x) { return x.points.length > 1; });
    if (gauges.length)
      lineChart(parent, Object.assign({ id: "live-server", title: "The server's requests running and waiting, as it reports them", ylabel: "requests", yunit: "", ylog: false, series: gauges }, base));
    if (g("serverKvPercent").length > 1)
      lineChart(parent, Object.assign({ id: "live-kv", title: "The server's KV cache in use", ylabel: "in use (%)", yunit: "%", ylog: false,
        series: [{ name: "KV cache", points: g("serverKvPercent"), color: PALETTE[5] }] }, base));
  }

  // serverGauges is the server's last reading as the status says it.
  function serverGauges(s) {
    var parts = [];
    if (s.serverRunning !== undefined) parts.push(fmt(s.serverRunning) + " running");
    if (s.serverWaiting !== undefined) parts.push(fmt(s.serverWaiting) + " waiting");
    if (s.serverKvPercent !== undefined) parts.push("KV " + fmt(s.serverKvPercent) + "%");
    return parts.length ? parts.join(" · ") + " (at " + fmt(s.serverAtS) + " s)" : "not read";
  }

  if (data.dashboard && window.EventSource) {
    var panel = document.getElementById("live");
    var hist = (data.dashboard.history || []).slice();
    var liveGrid = html("div", "charts", undefined, panel.parentNode);
    panel.parentNode.insertBefore(liveGrid, panel.nextSibling);
    liveCharts(liveGrid, hist);
    var es = new EventSource(data.dashboard.events);
    es.addEventListener("progress", function (ev) {
      var s = JSON.parse(ev.data);
      // A new level starts its own series.
      if (hist.length && (hist[hist.length - 1].level !== s.level || s.elapsedS < hist[hist.length - 1].elapsedS)) hist = [];
      hist.push(s);
      if (hist.length > 1200) hist = hist.filter(function (_, i) { return i % 2 === 0; });
      liveCharts(liveGrid, hist);
      panel.textContent = "";
      var level = s.level + (s.levels ? " (" + s.levelsDone + " of " + s.levels + " levels done)" : "");
      html("p", "status", level + " · " + fmt(s.elapsedS) + " s in" + (s.remainingS > 0 ? ", " + fmt(s.remainingS) + " s left" : ""), panel);
      var row = html("div", "counts", undefined, panel);
      [["sent", s.sent], ["ok", s.ok], ["failed", s.failed], ["in flight", s.inFlight],
        ["TTFT sched p50 / p95, last 5 s", s.recentCount ? fmt(s.ttftP50) + " / " + fmt(s.ttftP95) + " ms (" + s.recentCount + " requests)" : "none ended"],
        ["ITL p50 / p95, last 5 s", s.recentCount ? fmt(s.itlP50) + " / " + fmt(s.itlP95) + " ms" : "-"],
        ["TTFT sched p95, level so far", s.levelTtftP95 ? fmt(s.levelTtftP95) + " ms" : "-"],
        ["sent at", fmt(s.sentPerS) + "/s" + (s.offeredPerS ? " of " + fmt(s.offeredPerS) + "/s asked" : "")],
        ["client", s.health + " · timer lag p99 " + fmt(s.timerLagP99Ms) + " ms · CPU " + fmt(s.cpuPercent) + "%"],
        ["server", serverGauges(s)]].forEach(function (kv) {
        var span = html("span", "", undefined, row);
        html("b", "", kv[0] + " ", span);
        span.appendChild(document.createTextNode(typeof kv[1] === "number" ? fmt(kv[1]) : kv[1]));
      });
    });
    es.addEventListener("level", function () { es.close(); location.reload(); });
    es.addEventListener("done", function (ev) {
      es.close();
      var page = JSON.parse(ev.data);
      document.open();
      document.write(page);
      document.close();
    });
  }

  // textOverlaps is the pairs of a chart's labels drawn over each other
  // (by more than 1 px each way), by their text.
  function textOverlaps(f) {
    var boxes = [], out = [];
    f.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.width > 0 && t.textContent.trim() !== "") boxes.push({ r: r, s: t.textContent });
    });
    for (var i = 0; i < boxes.length; i++) {
      for (var j = i + 1; j < boxes.length; j++) {
        var a = boxes[i].r, b = boxes[j].r;
        if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1) {
          out.push(boxes[i].s + " | " + boxes[j].s);
        }
      }
    }
    return out;
  }

  // marksOutside counts a chart's points and bars drawn outside its
  // drawing.
  function marksOutside(f) {
    var svg = f.querySelector("svg"), n = 0;
    if (!svg) return 0;
    var box = svg.getBoundingClientRect();
    f.querySelectorAll("circle.point, rect.bar").forEach(function (m) {
      var r = m.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) n++;
    });
    return n;
  }

  // #knee-selfcheck: what a test in a headless browser reads back.
  var hash = location.hash || "";
  if (hash.indexOf("#knee-selfcheck") === 0) {
    var res = { overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth, charts: [], resources: performance.getEntriesByType("resource").length };
    document.querySelectorAll("figure.chart").forEach(function (f) {
      res.charts.push({ id: f.id, marks: f.querySelectorAll("path.series, circle.point, rect.bar").length,
        overlaps: textOverlaps(f), outside: marksOutside(f) });
    });
    res.cells = [];
    document.querySelectorAll("td, th").forEach(function (c) {
      if (c.clientWidth > 0 && c.scrollWidth > c.clientWidth + 1) res.cells.push(c.textContent.slice(0, 60));
    });
    var q = /explore=([a-z_]+),(p\d+),([\d.]+)/.exec(hash), box = document.getElementById("s0-explorer");
    if (q && box) res.explorer = box.run(q[1], q[2], q[3]);
    var pre = document.createElement("pre");
    pre.id = "knee-selfcheck";
    pre.textContent = JSON.stringify(res);
    document.body.appendChild(pre);
  }
})();
