/* LookBench leaderboard: tables, date window, ties, flags and charts from the embedded JSON data. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("lookbench-data").textContent);
  var OUTFIT = "outfit_recall@1";
  var DAY = 86400000;
  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
  var state = { family: D.families[0], k: D.ks[0], since: null, until: null, chartScope: "overall" };
  var SVGNS = "http://www.w3.org/2000/svg";

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function svgEl(tag, attrs, text) {
    var node = document.createElementNS(SVGNS, tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  /* Percent with 2 decimals, rounding exact ties to even like Python's format (toFixed rounds them up). */
  function pct(v) {
    var x = 100 * v, y = x * 200;
    if (Number.isInteger(y) && y % 2 !== 0 && y / 200 === x) {
      var lower = (y - 1) / 2;
      return ((lower % 2 === 0 ? lower : lower + 1) / 100).toFixed(2);
    }
    return x.toFixed(2);
  }
  function dayText(d) { return new Date(d * DAY).toISOString().slice(0, 10); }
  function parseDay(text) {
    if (!text) return null;
    var parts = text.split("-").map(Number);
    return Math.round(Date.UTC(parts[0], parts[1] - 1, parts[2]) / DAY);
  }
  function windowed() { return state.since !== null || state.until !== null; }
  function metricName() { return state.family === "outfit_recall" ? OUTFIT : state.family + "@" + state.k; }
  function title(scope) { return D.titles[scope] || scope; }
  function short(label) { return label.length > 26 ? label.slice(0, 25) + "\u2026" : label; }

  /* ---- per-query values ---- */
  function kept(q, i) {
    if (!windowed()) return true;
    var d = q.d[i];
    if (d === null) return false;
    return (state.since === null || d >= state.since) && (state.until === null || d <= state.until);
  }
  function queryValue(q, i, metric) {
    var parts = metric.split("@"), family = parts[0], k = Number(parts[1]);
    if (family === "ndcg") return q.ndcg[parts[1]][i] / D.ndcgScale;
    var rank = family === "mrr" ? q.fine[i] : q[family.replace("_recall", "")][i];
    if (rank <= 0 || rank > k) return 0;
    return family === "mrr" ? 1 / rank : 1;
  }
  function inScope(q, i, scope) { return scope === "overall" || D.subsets[q.s[i]] === scope; }

  /* Units of one run on one scope: keys (for pairing), clusters (resampled together) and values. */
  function units(run, scope, metric) {
    var q = run.q, out = { keys: [], clusters: [], values: [] };
    if (metric === OUTFIT) {
      var outfits = {}, order = [];
      for (var i = 0; i < q.s.length; i++) {
        var subset = D.subsets[q.s[i]];
        if (D.streetlook.indexOf(subset) < 0 || !inScope(q, i, scope) || !kept(q, i)) continue;
        var key = subset + "/" + q.c[i];
        if (!(key in outfits)) { outfits[key] = 1; order.push(key); }
        if (q.fine[i] !== 1) outfits[key] = 0;
      }
      order.forEach(function (key, j) { out.keys.push(key); out.clusters.push(j); out.values.push(outfits[key]); });
      return out;
    }
    var clusterIds = {}, nextId = 0;
    for (var r = 0; r < q.s.length; r++) {
      if (!inScope(q, r, scope) || !kept(q, r)) continue;
      var ck = q.s[r] + "/" + q.c[r];
      if (!(ck in clusterIds)) clusterIds[ck] = nextId++;
      out.keys.push(q.s[r] + "/" + q.r[r]);
      out.clusters.push(clusterIds[ck]);
      out.values.push(queryValue(q, r, metric));
    }
    return out;
  }
  function mean(values) {
    var sum = 0;
    for (var i = 0; i < values.length; i++) sum += values[i];
    return values.length ? sum / values.length : NaN;
  }

  /* ---- seeded bootstrap (this page's own; Python's is used for the runs' own windows) ---- */
  function rng(seed) {
    var a = seed >>> 0;
    return function () {
      a = (a + 0x6d2b79f5) >>> 0;
      var t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  function clusterSums(values, clusters) {
    var n = 0, i;
    for (i = 0; i < clusters.length; i++) n = Math.max(n, clusters[i] + 1);
    var sums = new Float64Array(n), sizes = new Float64Array(n);
    for (i = 0; i < values.length; i++) { sums[clusters[i]] += values[i]; sizes[clusters[i]] += 1; }
    return { sums: sums, sizes: sizes };
  }
  function replicates(values, clusters, resamples, seed) {
    var cs = clusterSums(values, clusters), n = cs.sums.length, rand = rng(seed), out = new Float64Array(resamples);
    for (var b = 0; b < resamples; b++) {
      var total = 0, size = 0;
      for (var j = 0; j < n; j++) {
        var c = Math.floor(rand() * n);
        total += cs.sums[c]; size += cs.sizes[c];
      }
      out[b] = size ? total / size : 0;
    }
    return out;
  }
  function quantile(sorted, p) {
    var pos = p * (sorted.length - 1), lo = Math.floor(pos), hi = Math.ceil(pos);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
  }
  function interval(values, clusters, seed) {
    if (!values.length) return [NaN, NaN];
    var reps = Array.prototype.slice.call(replicates(values, clusters, 1000, seed)).sort(function (a, b) { return a - b; });
    return [quantile(reps, 0.025), quantile(reps, 0.975)];
  }
  function pairedP(a, b) {
    var index = {}, diffs = [], clusters = [];
    b.keys.forEach(function (key, i) { index[key] = i; });
    a.keys.forEach(function (key, i) {
      if (key in index) { diffs.push(a.values[i] - b.values[index[key]]); clusters.push(a.clusters[i]); }
    });
    if (!diffs.length) return null;
    var remap = {}, next = 0;
    var dense = clusters.map(function (c) { if (!(c in remap)) remap[c] = next++; return remap[c]; });
    var reps = replicates(diffs, dense, 1000, 7), le = 0, ge = 0;
    for (var i = 0; i < reps.length; i++) { if (reps[i] <= 0) le++; if (reps[i] >= 0) ge++; }
    return Math.min(1, 2 * Math.min(le / reps.length, ge / reps.length));
  }

  /* ---- rows of one table ---- */
  function rankRows(rows, pAbove) {
    var group = -1, sizes = {};
    rows.forEach(function (row, i) {
      var p = i ? pAbove(rows[i], rows[i - 1]) : null;
      row.p = p;
      if (i && p !== null && p >= 0.05) { row.rank = rows[i - 1].rank; row.group = group; }
      else { row.rank = i + 1; group += 1; row.group = group; }
      sizes[row.group] = (sizes[row.group] || 0) + 1;
    });
    rows.forEach(function (row) { row.label = sizes[row.group] > 1 ? row.rank + "=" : String(row.rank); });
    return rows;
  }
  function tableRows(scope, metric) {
    if (!windowed()) {
      var ties = (D.ties[metric] || {})[scope] || [];
      return ties.map(function (t) {
        var m = D.runs[t[0]].metrics[scope][metric];
        return { run: t[0], value: m.v, lo: m.lo, hi: m.hi, n: m.n, label: t[1], p: t[2],
                 group: null, tied: /=$/.test(t[1]) };
      });
    }
    var rows = [];
    D.runs.forEach(function (run, i) {
      var u = units(run, scope, metric);
      if (!u.values.length) return;
      var ci = interval(u.values, u.clusters, 11 + i);
      rows.push({ run: i, value: mean(u.values), lo: ci[0], hi: ci[1], n: u.values.length, units: u });
    });
    rows.sort(function (a, b) { return b.value - a.value || a.run - b.run; });
    rankRows(rows, function (row, above) {
      return D.runs[row.run].group === D.runs[above.run].group ? pairedP(row.units, above.units) : null;
    });
    rows.forEach(function (row) { row.tied = /=$/.test(row.label); });
    return rows;
  }
  function bandRows(rows) {
    var band = 0;
    rows.forEach(function (row, i) {
      if (i && row.label !== rows[i - 1].label) band = 1 - band;
      row.band = band;
    });
  }

  /* ---- flags ---- */
  function runFlags(i) {
    var run = D.runs[i];
    if (!windowed()) return run.flags;
    var start = state.since;
    if (start === null) {
      var q = run.q;
      for (var j = 0; j < q.d.length; j++) if (kept(q, j) && q.d[j] !== null) start = start === null ? q.d[j] : Math.min(start, q.d[j]);
    }
    var flags = run.staticFlags.slice();
    var which = run.cutoff ? ["training cutoff", run.cutoff] : ["release date", run.release];
    if (start !== null && which[1] && parseDay(which[1]) >= start) {
      flags.push({ kind: "date", mark: "\u2021", reason: which[0] + " " + which[1] + " is on or after the window start " + dayText(start) });
    }
    return flags;
  }
  function flagCell(i) {
    var td = el("td", { "class": "flags" });
    flagSpans(i).forEach(function (span) { td.appendChild(span); });
    return td;
  }
  function flagSpans(i) {
    var byKind = {}, order = [];
    runFlags(i).forEach(function (f) {
      if (!(f.kind in byKind)) { byKind[f.kind] = { mark: f.mark, reasons: [] }; order.push(f.kind); }
      byKind[f.kind].reasons.push(f.reason);
    });
    return order.map(function (kind) {
      var f = byKind[kind];
      return el("span", { "class": "flag flag-" + kind, title: f.reasons.join("; "), "data-kind": kind }, f.mark);
    });
  }
  function modelLink(i) {
    return el("a", { href: "#model-" + i }, D.runs[i].label);
  }

  /* ---- rendering ---- */
  function renderTables() {
    var host = clear(document.getElementById("tables")), metric = metricName();
    host.appendChild(el("h2", {}, metric + " (%)"));
    D.scopes.forEach(function (scope) {
      var rows = tableRows(scope, metric);
      var published = D.published[scope] || {};
      var pubNames = Object.keys(published).filter(function (name) { return metric in published[name]; });
      if (!rows.length && !pubNames.length) return;
      bandRows(rows);
      host.appendChild(el("h3", {}, title(scope)));
      var table = el("table", { "class": "board", "data-scope": scope, "data-metric": metric });
      var head = el("tr");
      ["rank", "model", "flags", "value", "95% CI", "n"].forEach(function (h, j) {
        head.appendChild(el("th", { "class": j >= 3 ? "num" : "" }, h));
      });
      table.appendChild(el("thead")).appendChild(head);
      var body = table.appendChild(el("tbody", { "class": "runs" }));
      rows.forEach(function (row) {
        var tr = el("tr", { "data-run": row.run, "class": "band-" + row.band + (row.tied ? " tied" : "") });
        tr.appendChild(el("td", { "class": "rank", title: row.p === null || row.p === undefined ? "" : "p vs row above = " + row.p.toFixed(3) }, row.label));
        tr.appendChild(el("td")).appendChild(modelLink(row.run));
        tr.appendChild(flagCell(row.run));
        tr.appendChild(el("td", { "class": "num value", "data-scope": scope, "data-metric": metric, "data-run": row.run }, pct(row.value)));
        tr.appendChild(el("td", { "class": "num ci" }, "[" + pct(row.lo) + ", " + pct(row.hi) + "]"));
        tr.appendChild(el("td", { "class": "num n" }, row.n));
        body.appendChild(tr);
      });
      if (pubNames.length && document.getElementById("show-published").checked) {
        var pub = table.appendChild(el("tbody", { "class": "published" }));
        var cap = pub.appendChild(el("tr", { "class": "caption" }));
        cap.appendChild(el("td", { colspan: 6 }, "Authors' published numbers (LookBench v2601, real snapshot; not recomputed, not windowed)"));
        pubNames.sort(function (a, b) { return published[b][metric] - published[a][metric]; }).forEach(function (name) {
          var tr = pub.appendChild(el("tr", { "class": "published-row" }));
          tr.appendChild(el("td", {}, "\u2013"));
          tr.appendChild(el("td", {}, name));
          tr.appendChild(el("td"));
          tr.appendChild(el("td", { "class": "num" }, pct(published[name][metric])));
          tr.appendChild(el("td"));
          tr.appendChild(el("td"));
        });
      }
      host.appendChild(table);
    });
  }

  function renderWindowStatus() {
    var status = document.getElementById("window-status"), list = clear(document.getElementById("window-counts"));
    status.textContent = windowed()
      ? "Window: " + (state.since === null ? "\u2026" : dayText(state.since)) + " to " + (state.until === null ? "\u2026" : dayText(state.until))
      : "Window: every query of each run (as evaluated)";
    D.runs.forEach(function (run, i) {
      var n = run.q.s.length, k = 0;
      for (var j = 0; j < n; j++) if (kept(run.q, j)) k++;
      list.appendChild(el("li", { "data-run": i, "data-kept": k, "data-total": n }, run.label + ": " + k + " of " + n + " queries"));
    });
  }

  /* Per-key means of one run: key(q, i) -> group name. */
  function groupMeans(run, scope, metric, key) {
    var q = run.q, sums = {}, counts = {};
    for (var i = 0; i < q.s.length; i++) {
      if (!inScope(q, i, scope) || !kept(q, i)) continue;
      var g = key(q, i);
      if (g === null) continue;
      sums[g] = (sums[g] || 0) + queryValue(q, i, metric);
      counts[g] = (counts[g] || 0) + 1;
    }
    var out = {};
    Object.keys(sums).forEach(function (g) { out[g] = { v: sums[g] / counts[g], n: counts[g] }; });
    return out;
  }
  function breakdownTable(id, groups, perRun, limit) {
    var host = clear(document.getElementById(id));
    var table = el("table", { "class": "breakdown" }), head = el("tr");
    head.appendChild(el("th", {}, "value"));
    D.runs.forEach(function (run, i) {
      var th = head.appendChild(el("th", { "class": "num" }));
      th.appendChild(modelLink(i));
      th.appendChild(document.createTextNode(" "));
      flagSpans(i).forEach(function (span) { th.appendChild(span); });
    });
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody"));
    groups.slice(0, limit).forEach(function (g) {
      var tr = body.appendChild(el("tr", { "data-group": g }));
      tr.appendChild(el("td", {}, g));
      perRun.forEach(function (means) {
        var m = means[g];
        tr.appendChild(el("td", { "class": "num" }, m ? pct(m.v) + " (" + m.n + ")" : "-"));
      });
    });
    host.appendChild(table);
    if (groups.length > limit) host.appendChild(el("p", { "class": "muted" }, "showing the " + limit + " most frequent of " + groups.length));
  }
  function sortedGroups(perRun) {
    var counts = {};
    perRun.forEach(function (means) { Object.keys(means).forEach(function (g) { counts[g] = Math.max(counts[g] || 0, means[g].n); }); });
    return Object.keys(counts).sort(function (a, b) { return counts[b] - counts[a] || (a < b ? -1 : 1); });
  }
  function renderBreakdowns() {
    var metric = metricName() === OUTFIT ? "fine_recall@1" : metricName(), scope = state.chartScope;
    var cats = D.runs.map(function (run) { return groupMeans(run, scope, metric, function (q, i) { return D.categories[q.g[i]]; }); });
    breakdownTable("categories", sortedGroups(cats), cats, 60);
    var note = document.getElementById("attribute-note");
    if (!D.attributesKnown) {
      note.textContent = "The snapshot of at least one run was not reachable when the site was built, so only the per-category breakdown is shown.";
      clear(document.getElementById("attributes"));
    } else {
      note.textContent = metric + ", " + title(scope) + ", per query main attribute (mean % and query count).";
      var attrs = D.runs.map(function (run) { return groupMeans(run, scope, metric, function (q, i) { return q.a[i] < 0 ? null : D.attributes[q.a[i]]; }); });
      breakdownTable("attributes", sortedGroups(attrs), attrs, 40);
    }
    renderCategoryChart(cats, sortedGroups(cats).slice(0, 12), metric);
  }

  /* ---- charts (inline SVG) ---- */
  function frame(host, w, h, heading) {
    clear(host);
    var svg = svgEl("svg", { viewBox: "0 0 " + w + " " + h, width: w, height: h, role: "img" });
    svg.appendChild(svgEl("title", {}, heading));
    svg.appendChild(svgEl("text", { x: 10, y: 16, "font-weight": "bold" }, heading));
    host.appendChild(svg);
    return svg;
  }
  function yAxis(svg, x0, y0, y1, w) {
    [0, 0.25, 0.5, 0.75, 1].forEach(function (t) {
      var y = y0 - t * (y0 - y1);
      svg.appendChild(svgEl("line", { x1: x0, x2: x0 + w, y1: y, y2: y, stroke: "#eee" }));
      svg.appendChild(svgEl("text", { x: x0 - 6, y: y + 4, "text-anchor": "end" }, (100 * t).toFixed(0)));
    });
  }
  function legend(svg, x, y) {
    D.runs.forEach(function (run, i) {
      svg.appendChild(svgEl("rect", { x: x, y: y + 16 * i - 9, width: 10, height: 10, fill: PALETTE[i % PALETTE.length] }));
      svg.appendChild(svgEl("text", { x: x + 14, y: y + 16 * i }, short(run.label)));
    });
  }
  function renderRecallChart() {
    var family = /recall$/.test(state.family) && state.family !== "outfit_recall" ? state.family : "fine_recall";
    var scope = state.chartScope, W = 640, H = 280, x0 = 50, x1 = 420, y0 = 250, y1 = 30;
    var svg = frame(document.getElementById("chart-recall"), W, H, family + "@K, " + title(scope) + " (%)");
    yAxis(svg, x0, y0, y1, x1 - x0);
    var ks = D.ks, step = ks.length > 1 ? (x1 - x0) / (ks.length - 1) : 0;
    ks.forEach(function (k, j) { svg.appendChild(svgEl("text", { x: x0 + j * step, y: y0 + 16, "text-anchor": "middle" }, "K=" + k)); });
    D.runs.forEach(function (run, i) {
      var points = [];
      ks.forEach(function (k, j) {
        var u = units(run, scope, family + "@" + k);
        if (u.values.length) points.push([x0 + j * step, y0 - mean(u.values) * (y0 - y1)]);
      });
      if (!points.length) return;
      var color = PALETTE[i % PALETTE.length];
      svg.appendChild(svgEl("polyline", { points: points.map(function (p) { return p.join(","); }).join(" "), fill: "none", stroke: color, "stroke-width": 2, "class": "curve", "data-run": i }));
      points.forEach(function (p) { svg.appendChild(svgEl("circle", { cx: p[0], cy: p[1], r: 3, fill: color })); });
    });
    legend(svg, x1 + 20, 40);
  }
  function renderCategoryChart(cats, groups, metric) {
    var W = 640, H = 300, x0 = 50, x1 = 620, y0 = 230, y1 = 30;
    var svg = frame(document.getElementById("chart-categories"), W, H, metric + " per category, " + title(state.chartScope) + " (%)");
    yAxis(svg, x0, y0, y1, x1 - x0);
    var slot = groups.length ? (x1 - x0) / groups.length : 0, bar = slot * 0.8 / Math.max(D.runs.length, 1);
    groups.forEach(function (g, j) {
      var gx = x0 + j * slot + slot * 0.1;
      cats.forEach(function (means, i) {
        var m = means[g];
        if (!m) return;
        var h = m.v * (y0 - y1);
        var rect = svgEl("rect", { x: gx + i * bar, y: y0 - h, width: Math.max(bar - 1, 1), height: h, fill: PALETTE[i % PALETTE.length], "class": "bar" });
        rect.appendChild(svgEl("title", {}, D.runs[i].label + " / " + g + ": " + pct(m.v) + "% (" + m.n + ")"));
        svg.appendChild(rect);
      });
      svg.appendChild(svgEl("text", { x: gx + slot * 0.4, y: y0 + 14, "text-anchor": "end", transform: "rotate(-35 " + (gx + slot * 0.4) + " " + (y0 + 14) + ")" }, g));
    });
  }
  function renderScatter() {
    var axis = document.getElementById("scatter-x").value, metric = metricName();
    var W = 640, H = 300, x0 = 60, x1 = 600, y0 = 250, y1 = 30;
    var svg = frame(document.getElementById("chart-scatter"), W, H, metric + ", Overall (%) against " + (axis === "params" ? "parameters" : "images/s"));
    yAxis(svg, x0, y0, y1, x1 - x0);
    var pts = [];
    D.runs.forEach(function (run, i) {
      var x = axis === "params" ? run.params : run.throughput;
      var u = units(run, "overall", metric);
      if (x && x > 0 && u.values.length) pts.push({ i: i, x: Math.log10(x), y: mean(u.values), raw: x });
    });
    if (!pts.length) {
      svg.appendChild(svgEl("text", { x: x0 + 10, y: 140 }, "no run declares " + (axis === "params" ? "a parameter count" : "a throughput")));
      return;
    }
    var lo = Math.min.apply(null, pts.map(function (p) { return p.x; })) - 0.2, hi = Math.max.apply(null, pts.map(function (p) { return p.x; })) + 0.2;
    pts.forEach(function (p) {
      var cx = x0 + (p.x - lo) / (hi - lo) * (x1 - x0), cy = y0 - p.y * (y0 - y1);
      var dot = svgEl("circle", { cx: cx, cy: cy, r: 5, fill: PALETTE[p.i % PALETTE.length], "class": "point", "data-run": p.i });
      dot.appendChild(svgEl("title", {}, D.runs[p.i].label + ": " + pct(p.y) + "% at " + p.raw));
      svg.appendChild(dot);
      svg.appendChild(svgEl("text", { x: cx + 7, y: cy - 6 }, short(D.runs[p.i].label)));
    });
    for (var e = Math.ceil(lo); e <= Math.floor(hi); e++) {
      var tx = x0 + (e - lo) / (hi - lo) * (x1 - x0);
      svg.appendChild(svgEl("text", { x: tx, y: y0 + 16, "text-anchor": "middle" }, "1e" + e));
    }
  }

  function renderModels() {
    var host = clear(document.getElementById("model-cards"));
    D.runs.forEach(function (run, i) {
      var box = host.appendChild(el("div", { "class": "model", id: "model-" + i }));
      box.appendChild(el("h3", {}, run.label));
      var facts = el("ul");
      [["result file", run.file], ["snapshot", run.snapshot], ["spec", run.spec], ["release date", run.release || "unknown"],
       ["training cutoff", run.cutoff || "unknown"], ["parameters", run.params === null ? "unknown" : run.params],
       ["evaluated window", run.window ? (run.window.since || "\u2026") + " to " + (run.window.until || "\u2026") : "all dates"]
      ].forEach(function (pair) { facts.appendChild(el("li", {}, pair[0] + ": " + pair[1])); });
      run.flags.forEach(function (f) { facts.appendChild(el("li", { "class": "flag-reason" }, f.mark + " " + f.reason + " (all dates of the run)")); });
      box.appendChild(facts);
      var url = run.card && (run.card.url || run.card.card_url || run.card.homepage);
      if (typeof url === "string" && /^https?:\/\//i.test(url)) box.appendChild(el("a", { href: url, rel: "noopener" }, "model card"));
      if (run.card) {
        var details = box.appendChild(el("details"));
        details.appendChild(el("summary", {}, "card"));
        details.appendChild(el("pre", {}, JSON.stringify(run.card, null, 2)));
      } else {
        box.appendChild(el("p", { "class": "muted" }, "no model card in the result file"));
      }
    });
  }

  function renderAll() {
    renderWindowStatus();
    renderTables();
    renderRecallChart();
    renderBreakdowns();
    renderScatter();
    document.body.setAttribute("data-ready", String(Date.now()));
  }

  function setup() {
    D.runs.forEach(function (run) {
      var shared = D.queries[run.q.shared];
      Object.keys(shared).forEach(function (name) { run.q[name] = shared[name]; });
    });
    var family = document.getElementById("family"), k = document.getElementById("k"), scope = document.getElementById("chart-scope");
    D.families.concat(D.hasOutfits ? ["outfit_recall"] : []).forEach(function (f) { family.appendChild(el("option", { value: f }, f)); });
    D.ks.forEach(function (v) { k.appendChild(el("option", { value: v }, v)); });
    D.scopes.forEach(function (s) { scope.appendChild(el("option", { value: s }, title(s))); });
    scope.value = state.chartScope;
    family.addEventListener("change", function () { state.family = family.value; renderAll(); });
    k.addEventListener("change", function () { state.k = Number(k.value); renderAll(); });
    scope.addEventListener("change", function () { state.chartScope = scope.value; renderAll(); });
    document.getElementById("scatter-x").addEventListener("change", renderScatter);
    var toggle = document.getElementById("show-published");
    toggle.disabled = !Object.keys(D.published).length;
    toggle.addEventListener("change", renderTables);
    document.getElementById("apply").addEventListener("click", function () {
      state.since = parseDay(document.getElementById("since").value);
      state.until = parseDay(document.getElementById("until").value);
      renderAll();
    });
    document.getElementById("reset").addEventListener("click", function () {
      document.getElementById("since").value = "";
      document.getElementById("until").value = "";
      state.since = state.until = null;
      renderAll();
    });
    var snaps = {};
    D.runs.forEach(function (run) { snaps[run.snapshot] = 1; });
    document.getElementById("meta").textContent = D.runs.length + " runs on snapshot(s) " + Object.keys(snaps).join(", ");
    renderModels();
    renderAll();
  }
  setup();
})();
