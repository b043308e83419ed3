/* LookBench leaderboard: tables, date window, ties, flags and charts from the embedded JSON data. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("lookbench-data").textContent);
  var OUTFIT = "outfit_recall@1";
  var DAY = 86400000;
  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
  var SVGNS = "http://www.w3.org/2000/svg";
  var BOARD_KEYS = ["rank", "model", "flags", "value", "ci", "n"];
  var DESCENDING_FIRST = { value: 1, ci: 1, n: 1, count: 1 };
  var state = {
    family: D.families[0], k: D.ks[0], subset: "all", since: null, until: null,
    sort: { key: "rank", dir: "asc" }, bsort: { key: "count", dir: "desc" }, x: "params",
    pubOpen: !!(D.published && D.published.open), baseline: null, exportFormat: null, distractors: false,
    group: 0, osort: { key: "rank", dir: "asc" }, facts: false, filter: { open: false, verified: false, license: "" }
  };
  var range = { min: null, max: null };

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
  function byId(id) { return document.getElementById(id); }
  /* Percent with 2 decimals, rounding exact ties to even like Python's format (toFixed rounds them up). */
  function pct(v) {
    var x = 100 * v, y = x * 200;
    if (Number.isInteger(y) && y % 2 !== 0 && y / 200 === x) {
      var lower = (y - 1) / 2;
      return ((lower % 2 === 0 ? lower : lower + 1) / 100).toFixed(2);
    }
    return x.toFixed(2);
  }
  /* 4700000 -> "4.7M", 150000000 -> "150M", 7000000000 -> "7B". */
  function count(n) {
    var units = [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(n) >= units[i][0]) {
        var v = n / units[i][0];
        return (v >= 100 ? v.toFixed(0) : String(Number(v.toPrecision(2)))) + units[i][1];
      }
    }
    return String(Number(n.toPrecision(3)));
  }
  function rate(x) { return (x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(1)) + " images/s"; }
  function dayText(d) { return new Date(d * DAY).toISOString().slice(0, 10); }
  function parseDay(text) {
    if (!text || !/^\d{4}-\d{2}-\d{2}$/.test(text)) return null;
    var parts = text.split("-").map(Number);
    var day = Math.round(Date.UTC(parts[0], parts[1] - 1, parts[2]) / DAY);
    return dayText(day) === text ? day : null;
  }
  function windowed() { return state.since !== null || state.until !== null; }
  function info(family) { return D.metricInfo[family] || { name: family, definition: "", per_k: true }; }
  function perK() { return info(state.family).per_k; }
  function metricName() { return perK() ? state.family + "@" + state.k : OUTFIT; }
  function metricTitle(metric) {
    var parts = metric.split("@");
    return info(parts[0]).name + "@" + parts[1];
  }
  function title(scope) { return D.titles[scope] || scope; }
  function chartScope() { return state.subset === "all" ? "overall" : state.subset; }
  function windowWords(since, until) {
    if (since === null && until === null) return "every date";
    if (until === null) return "since " + dayText(since);
    if (since === null) return "until " + dayText(until);
    return dayText(since) + " to " + dayText(until);
  }

  /* ---- per-query values ---- */
  function kept(q, i) {
    if (!windowed()) return true;
    var d = q.d[i];
    if (d === null) return false;
    return (state.since === null || d >= state.since) && (state.until === null || d <= state.until);
  }
  /* a run has a family's values: official Recall only where a legacy protocol scored it */
  function hasValues(q, metric) {
    var family = metric.split("@")[0];
    if (family === "distractor_share") return !!q.ds;
    if (family === "ndcg" || family === "map") return !!q[family];
    return !!q[family === "mrr" ? "fine" : family.replace("_recall", "")];
  }
  /* A query's value, or null where its kind has none: composed queries have no Item Recall, MRR or nDCG, image
     queries no mAP (and Recall only under a legacy protocol). */
  function queryValue(q, i, metric) {
    var parts = metric.split("@"), family = parts[0], k = Number(parts[1]);
    if (family === "distractor_share") return q.ds ? q.ds[i] : null;
    if (!hasValues(q, metric)) return null; // e.g. official Recall of a run no legacy protocol scored
    if (family === "ndcg" || family === "map") {
      var scaled = q[family][parts[1]][i];
      return scaled === null ? null : scaled / D.ndcgScale;
    }
    if (family === "mrr" && composedQuery(q, i)) return null;
    var rank = family === "mrr" ? q.fine[i] : q[family.replace("_recall", "")][i];
    if (rank === null) return null;
    if (rank <= 0 || rank > k) return 0;
    return family === "mrr" ? 1 / rank : 1;
  }
  var COMPOSED = {};
  (D.composed || []).forEach(function (name) { COMPOSED[name] = 1; });
  function composedQuery(q, i) { return D.subsets[q.s[i]] in COMPOSED; }
  /* overall: the image subsets' queries; composed_overall: the composed subsets'; "*": every query. */
  function inScope(q, i, scope) {
    if (scope === "*") return true;
    if (scope === "overall") return !composedQuery(q, i);
    if (scope === "composed_overall") return composedQuery(q, i);
    return D.subsets[q.s[i]] === scope;
  }
  function keptCount(run, scope) {
    var q = run.q, n = 0;
    for (var i = 0; i < q.s.length; i++) if (inScope(q, i, scope) && kept(q, i)) n++;
    return n;
  }
  /* Which queries of a scope a run scored (in the window): runs are ranked together only when these are equal. */
  function querySet(run, scope) {
    var q = run.q, keys = [];
    for (var i = 0; i < q.s.length; i++) if (inScope(q, i, scope) && kept(q, i)) keys.push(q.s[i] + "/" + q.r[i]);
    keys.sort();
    return { key: run.group + "|" + keys.join(","), n: keys.length };
  }

  /* Units of one run on one scope: keys (for pairing), clusters (resampled together) and values. */
  function units(run, scope, metric) {
    var q = run.q, out = { keys: [], clusters: [], clusterKeys: [], values: [], missing: false };
    if (metric === OUTFIT) {
      var outfits = {}, order = [];
      for (var i = 0; i < q.s.length; i++) {
        var subset = D.subsets[q.s[i]];
        if (D.streetlook.indexOf(subset) < 0 || !inScope(q, i, scope) || !kept(q, i)) continue;
        var key = subset + "/" + q.c[i];
        if (!(key in outfits)) { outfits[key] = 1; order.push(key); }
        if (q.fine[i] !== 1) outfits[key] = 0;
      }
      order.forEach(function (key, j) { out.keys.push(key); out.clusters.push(j); out.clusterKeys.push(key); out.values.push(outfits[key]); });
      return out;
    }
    if (!hasValues(q, metric)) return out;
    var clusterIds = {}, nextId = 0;
    for (var r = 0; r < q.s.length; r++) {
      if (!inScope(q, r, scope) || !kept(q, r)) continue;
      var value = queryValue(q, r, metric);
      if (value === null) { out.missing = true; continue; }
      var ck = q.s[r] + "/" + q.c[r];
      if (!(ck in clusterIds)) clusterIds[ck] = nextId++;
      out.keys.push(q.s[r] + "/" + q.r[r]);
      out.clusters.push(clusterIds[ck]);
      out.clusterKeys.push(D.subsets[q.s[r]] + "\u0000" + q.c[r]);
      out.values.push(value);
    }
    return out;
  }
  function mean(values) {
    var sum = 0;
    for (var i = 0; i < values.length; i++) sum += values[i];
    return values.length ? sum / values.length : NaN;
  }

  /* ---- Python's bootstrap (bootstrap.js): the same draws, so a window's intervals and ties equal
     `lookbench tables --since/--until` ---- */
  var B = window.lookbenchBootstrap;
  /* Subsets of a scope in lookbench's canonical order: LookBench's, other image subsets, composed by name. */
  function scopeSubsets(scope) {
    var names = D.subsets.filter(function (name) { return !(name in COMPOSED); }).concat(Object.keys(COMPOSED).sort());
    if (scope === "overall") return names.filter(function (n) { return !(n in COMPOSED); });
    if (scope === "composed_overall") return names.filter(function (n) { return n in COMPOSED; });
    return names.filter(function (n) { return n === scope; });
  }
  /* Per subset of the scope, the kept queries' values and raw cluster ids (or, for Outfit Recall, one value per
     outfit in cluster order), as lookbench.results.per_query.subset_values rebuilds them. */
  function subsetParts(run, scope, metric) {
    var q = run.q, bySubset = {};
    for (var i = 0; i < q.s.length; i++) {
      if (!inScope(q, i, scope) || !kept(q, i)) continue;
      var name = D.subsets[q.s[i]];
      if (metric === OUTFIT) {
        if (D.streetlook.indexOf(name) < 0) continue;
        var outfits = bySubset[name] = bySubset[name] || {};
        outfits[q.c[i]] = (outfits[q.c[i]] === undefined ? 1 : outfits[q.c[i]]) && q.fine[i] === 1 ? 1 : 0;
        continue;
      }
      var value = queryValue(q, i, metric);
      if (value === null) continue;
      var part = bySubset[name] = bySubset[name] || { name: name, values: [], clusters: [] };
      part.values.push(value);
      part.clusters.push(q.c[i]);
    }
    return scopeSubsets(scope).filter(function (name) { return name in bySubset; }).map(function (name) {
      if (metric !== OUTFIT) return bySubset[name];
      var ids = Object.keys(bySubset[name]).map(Number).sort(function (a, b) { return a - b; });
      return { name: name, values: ids.map(function (c) { return bySubset[name][c]; }) };
    });
  }
  /* A run's value on a scope: the result file's, or, in a page window, recomputed as `lookbench tables --since`. */
  function estimate(run, scope, metric) {
    if (!windowed()) {
      var m = (run.metrics[scope] || {})[metric];
      return m ? { value: m.v, lo: m.lo, hi: m.hi, n: m.n } : null;
    }
    var parts = subsetParts(run, scope, metric), all = [];
    parts.forEach(function (p) { all = all.concat(p.values); });
    if (!all.length) return null;
    var aggregate = scope === "overall" || scope === "composed_overall";
    var cis = metric === OUTFIT ? B.summariseOutfits(parts, run.boot) : B.summarise(parts, run.boot, aggregate);
    var ci = cis[aggregate ? "overall" : scope];
    return { value: mean(all), lo: ci[0], hi: ci[1], n: all.length };
  }
  /* lookbench.publish.reports.tiestats.PairTester.test(a, b): A - B over the units both kept, {diff, lo, hi, p} or null. */
  function pairTest(a, b, scope, metric) {
    var seed = D.tieSeed, R = D.paper.tieResamples, conf = D.paper.tieConfidence;
    var ua = units(D.runs[a], scope, metric), ub = units(D.runs[b], scope, metric);
    if (!ua.values.length || !ub.values.length || ua.missing) return null;
    var index = {}, diffs = [], keys = [];
    ub.keys.forEach(function (key, i) { index[key] = i; });
    ua.keys.forEach(function (key, i) {
      if (key in index) { diffs.push(ua.values[i] - ub.values[index[key]]); keys.push(ua.clusterKeys[i]); }
    });
    if (!diffs.length) return null;
    if (metric === OUTFIT) return B.paired(diffs, keys, function () { return [seed, B.crc32(metric)]; }, R, conf);
    return B.paired(diffs, keys, function (n) { return [seed, B.crc32(scope), n]; }, R, conf);
  }

  /* ---- rows of one table, in query-set groups ---- */
  function rankRows(rows, pAbove) {
    var group = -1, sizes = {};
    rows.forEach(function (row, i) {
      var p = i ? pAbove(rows[i], rows[i - 1]) : null;
      row.p = p;
      if (i && p !== null && p >= 0.05) { row.rank = rows[i - 1].rank; row.tie = group; }
      else { row.rank = i + 1; group += 1; row.tie = group; }
      sizes[row.tie] = (sizes[row.tie] || 0) + 1;
    });
    rows.forEach(function (row) { row.label = sizes[row.tie] > 1 ? row.rank + "=" : String(row.rank); });
    return rows;
  }
  /* [{runs: [...], n: queries, rows: [{run, value, lo, hi, n, label, p}]}], largest query set first. */
  function tableGroups(scope, metric) {
    var groups = [];
    if (!windowed()) {
      ((D.ties[metric] || {})[scope] || []).forEach(function (t) {
        var m = D.runs[t[0]].metrics[scope][metric];
        if (!groups[t[3]]) groups[t[3]] = { runs: [], n: querySet(D.runs[t[0]], scope).n, rows: [] };
        groups[t[3]].runs.push(t[0]);
        groups[t[3]].rows.push({ run: t[0], value: m.v, lo: m.lo, hi: m.hi, n: m.n, label: t[1], p: t[2] });
      });
      return groups.filter(Boolean);
    }
    var sets = {};
    D.runs.forEach(function (run, i) {
      if (!keptCount(run, scope)) return;
      var qs = querySet(run, scope);
      if (!(qs.key in sets)) { sets[qs.key] = { runs: [], n: qs.n, rows: [] }; groups.push(sets[qs.key]); }
      sets[qs.key].runs.push(i);
    });
    groups.sort(function (a, b) { return b.n - a.n || a.runs[0] - b.runs[0]; });
    groups.forEach(function (g) {
      g.runs.forEach(function (i) {
        var e = estimate(D.runs[i], scope, metric);
        if (e) g.rows.push({ run: i, value: e.value, lo: e.lo, hi: e.hi, n: e.n });
      });
      g.rows.sort(function (a, b) { return b.value - a.value || a.run - b.run; });
      rankRows(g.rows, function (row, above) { var t = pairTest(row.run, above.run, scope, metric); return t && t.p; });
    });
    return groups.filter(function (g) { return g.rows.length; });
  }
  function bandRows(rows) {
    var band = 0;
    rows.forEach(function (row, i) {
      if (i && row.label !== rows[i - 1].label) band = 1 - band;
      row.band = band;
    });
  }
  function compare(a, b, key) {
    if (key === "model") return D.runs[a.run].title.localeCompare(D.runs[b.run].title);
    if (key === "flags") return flagText(a.run).localeCompare(flagText(b.run));
    if (key === "ci") return a.lo - b.lo || a.hi - b.hi;
    if (key === "n") return a.n - b.n;
    if (key === "value") return a.value - b.value;
    return parseInt(a.label, 10) - parseInt(b.label, 10) || b.value - a.value;
  }
  function sortRows(rows, sort) {
    var sign = sort.dir === "desc" ? -1 : 1;
    return rows.slice().sort(function (a, b) { return sign * compare(a, b, sort.key) || a.run - b.run; });
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
    if (start !== null && run.bound && parseDay(run.bound.day) >= start) {
      flags.push({ kind: "date", mark: "\u2021", reason: (run.bound.release ? "release date " : "training cutoff ") + run.bound.text + " is on or after the window start " + dayText(start) });
    }
    return flags;
  }
  function flagText(i) { return runFlags(i).map(function (f) { return f.mark; }).join(""); }
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
    var spans = order.map(function (kind) {
      var f = byKind[kind];
      return el("span", { "class": "flag flag-" + kind, title: f.reasons.join("; "), "data-kind": kind }, f.mark);
    });
    var checked = D.runs[i].verification;  /* a results-repository row: verified or unverified */
    if (checked) spans.push(el("span", { "class": "badge badge-" + checked.status, title: checked.note }, checked.status));
    return spans;
  }
  /* The run's name linking to its model card, then its evaluation window as a tag. */
  function runName(i, withFlags, plain) {
    var run = D.runs[i], span = el("span", { "class": "run-name" + (run.windowText ? " windowed" : "") }), text = run.label + (run.nameExtra ? " " + run.nameExtra : "");
    span.appendChild(plain ? el("span", {}, text) : el("a", { href: "#model-" + i }, text));
    if (run.windowText) {
      span.appendChild(document.createTextNode(" "));
      span.appendChild(el("span", { "class": "window-tag", title: "evaluated only on queries first seen " + run.windowText }, "[" + run.windowText + "]"));
    }
    if (withFlags) flagSpans(i).forEach(function (s) { span.appendChild(document.createTextNode(" ")); span.appendChild(s); });
    return span;
  }

  /* ---- sortable headers ---- */
  function sortHeader(label, key, sort, numeric, onSort) {
    var th = el("th", { "class": numeric ? "num" : "", scope: "col" });
    if (sort.key === key) th.setAttribute("aria-sort", sort.dir === "asc" ? "ascending" : "descending");
    var button = th.appendChild(el("button", { type: "button", "class": "sort", "data-key": key }));
    if (typeof label === "string") button.textContent = label; else button.appendChild(label);
    button.appendChild(el("span", { "class": "arrow", "aria-hidden": "true" }, sort.key === key ? (sort.dir === "asc" ? " \u25b2" : " \u25bc") : " \u21c5"));
    button.addEventListener("click", function () {
      if (sort.key === key) sort.dir = sort.dir === "asc" ? "desc" : "asc";
      else { sort.key = key; sort.dir = DESCENDING_FIRST[key] || /^(run-|c\d+$|diff$)/.test(key) ? "desc" : "asc"; }
      onSort();
    });
    return th;
  }
  function scroller(table, tall) {
    var box = el("div", { "class": tall ? "scroll tall" : "scroll" });
    box.appendChild(table);
    return box;
  }

  /* ---- the boards ---- */
  /* The latest since and earliest until of the windows of runs on one snapshot content (runs on other snapshots
     do not matter: they are never ranked with these), for the first snapshot whose runs have windows. */
  function commonWindow() {
    var bySnapshot = {}, order = [];
    D.runs.forEach(function (run) {
      if (!(run.group in bySnapshot)) { bySnapshot[run.group] = []; order.push(run.group); }
      bySnapshot[run.group].push(run);
    });
    for (var g = 0; g < order.length; g++) {
      var runs = bySnapshot[order[g]], since = null, until = null, any = false;
      runs.forEach(function (run) {
        if (!run.window) return;
        any = true;
        var s = parseDay(run.window.since), u = parseDay(run.window.until);
        if (s !== null) since = since === null ? s : Math.max(since, s);
        if (u !== null) until = until === null ? u : Math.min(until, u);
      });
      if (any && runs.length > 1 && !(since !== null && until !== null && since > until)) return { since: since, until: until };
    }
    return null;
  }
  function groupCaption(g, letter, split) {
    var snaps = {}, windows = {};
    g.runs.forEach(function (i) {
      snaps[D.runs[i].snapshot + " (content " + D.runs[i].contentHash + ")"] = 1;
      windows[D.runs[i].windowText || "every date"] = 1;
    });
    var text = (split ? "Group " + letter + ": " : "") + g.n + " queries of " + Object.keys(snaps).join(", ") +
      ", evaluated " + Object.keys(windows).map(function (w) { return w === "every date" ? "on every date" : w; }).join("; ");
    if (windowed()) text += ", page window " + windowWords(state.since, state.until);
    return text;
  }
  function renderTables() {
    var host = clear(byId("tables")), metric = metricName(), split = false, shown = 0;
    var head = host.appendChild(el("h2", { id: "board-title" }));
    head.appendChild(document.createTextNode(metricTitle(metric) + " (%) "));
    head.appendChild(el("a", { href: "#def-" + state.family, "class": "def-link" }, "definition"));
    head.appendChild(document.createTextNode(" "));
    head.appendChild(el("a", { href: "#about", "class": "def-link" }, "how to read ranks and flags"));
    var note = host.appendChild(el("div", { id: "sets-note" }));
    D.scopes.forEach(function (scope) {
      if (state.subset !== "all" && state.subset !== scope) return;
      var groups = tableGroups(scope, metric);
      if (!groups.length) return;
      shown += 1;
      if (groups.length > 1) split = true;
      host.appendChild(el("h3", {}, title(scope)));
      var table = el("table", { "class": "board", "data-scope": scope, "data-metric": metric });
      var hr = el("tr");
      [["rank", "rank"], ["model", "model"], ["flags", "flags"], [metricTitle(metric) + " %", "value"], ["95% CI", "ci"], ["n", "n"]]
        .forEach(function (h, j) { hr.appendChild(sortHeader(h[0], h[1], state.sort, j >= 3, renderAndSave)).classList.add("col-" + h[1]); });
      table.appendChild(el("thead")).appendChild(hr);
      groups.forEach(function (g, gi) {
        var body = table.appendChild(el("tbody", { "class": "runs", "data-set": gi }));
        if (groups.length > 1) {
          var cap = body.appendChild(el("tr", { "class": "set-caption" }));
          cap.appendChild(el("th", { colspan: 6, scope: "rowgroup" })).appendChild(el("div", {}, groupCaption(g, String.fromCharCode(65 + gi), true)));
        }
        bandRows(g.rows);
        var ordered = state.sort.key === "rank" && state.sort.dir === "asc" ? g.rows : sortRows(g.rows, state.sort);
        ordered.forEach(function (row) {
          var tied = /=$/.test(row.label);
          var tr = el("tr", { "class": "run band-" + (state.sort.key === "rank" ? row.band : 0) + (tied ? " tied" : ""), "data-run": row.run });
          tr.appendChild(el("td", { "class": "rank", title: row.p === null || row.p === undefined ? "" : "p vs the row ranked above = " + row.p.toFixed(3) }, row.label));
          tr.appendChild(el("td", { "class": "model" })).appendChild(runName(row.run, false));
          tr.appendChild(flagCell(row.run));
          var ci = exactOutfits(metric, row.value, row.lo, row.hi, row.n) || "[" + pct(row.lo) + ", " + pct(row.hi) + "]";
          var value = tr.appendChild(el("td", { "class": "num value", "data-scope": scope, "data-metric": metric, "data-run": row.run }, pct(row.value)));
          value.appendChild(el("span", { "class": "ci-inline", "aria-hidden": "true" }, ci));
          tr.appendChild(el("td", { "class": "num ci" }, ci));
          tr.appendChild(el("td", { "class": "num n" }, row.n));
          body.appendChild(tr);
        });
      });
      if (groups.length === 1) table.insertBefore(el("caption", { "class": "set-line" }, groupCaption(groups[0], "", false)), table.firstChild);
      host.appendChild(scroller(table));
      var pub = publishedBlock(scope, metric);
      if (pub) host.appendChild(pub);
      var refs = referenceBlock(scope, metric);
      if (refs) host.appendChild(refs);
    });
    if (!shown) {
      host.appendChild(el("p", { id: "empty-window", "class": "empty", role: "status" },
        "No queries in this window (" + windowWords(state.since, state.until) + "). " +
        (range.min === null ? "No query of these runs has a date." : "The runs' queries were first seen from " + dayText(range.min) + " to " + dayText(range.max) + ".")));
    }
    renderSetsNote(note, split);
    return shown > 0;
  }
  function renderSetsNote(host, split) {
    clear(host);
    if (split) {
      var p = host.appendChild(el("p", { "class": "notice", id: "sets-split" },
        "Runs scored on different query sets are ranked in separate groups (A, B, \u2026), never against each other: ranks and tie tests compare only runs that scored exactly the same queries. "));
      var common = commonWindow();
      if (common && (common.since !== state.since || common.until !== state.until)) {
        var button = p.appendChild(el("button", { type: "button", id: "apply-common" }, "Rank them together on their common window (" + windowWords(common.since, common.until) + ")"));
        button.addEventListener("click", function () { setWindow(common.since, common.until); });
      }
    } else if (windowed() && D.runs.some(function (run) { return run.window; }) && commonWindow()) {
      host.appendChild(el("p", { "class": "notice", id: "sets-common" },
        "The page window (" + windowWords(state.since, state.until) + ") applies to every run, so runs evaluated on different windows are ranked together on the same queries."));
    }
  }
  /* published numbers of a legacy benchmark (In-shop, DeepFashion2, ...): labelled rows with their sources */
  function referenceBlock(scope, metric) {
    var P = D.published;
    var rows = P && P.references && P.references[scope] ? P.references[scope].filter(function (r) { return metric in r.metrics; }) : [];
    if (!rows.length) return null;
    var details = el("details", { "class": "published references", "data-scope": scope, open: "" });
    details.appendChild(el("summary", {}, "Published reference numbers, " + metricTitle(metric) + ", " + title(scope) + ": " + rows.length));
    details.appendChild(el("p", { "class": "muted" }, "Copied from the papers and model cards named; not recomputed, never ranked with the runs above."));
    var table = el("table", { "class": "published-table" }), hr = el("tr");
    ["reference (source)", metricTitle(metric) + " %"].forEach(function (h, j) { hr.appendChild(el("th", { "class": j === 1 ? "num" : "", scope: "col" }, h)); });
    table.appendChild(el("thead")).appendChild(hr);
    var body = table.appendChild(el("tbody"));
    rows.forEach(function (r) {
      var tr = body.appendChild(el("tr", { "class": "reference-row" }));
      tr.appendChild(el("td", {})).appendChild(el("a", { href: r.url, rel: "noopener" }, r.label));
      tr.appendChild(el("td", { "class": "num" }, pct(r.metrics[metric])));
    });
    details.appendChild(scroller(table));
    return details;
  }
  function publishedBlock(scope, metric) {
    var P = D.published;
    if (!P) return null;
    if (!P.scopes[scope] && scope !== "overall" && !(scope in P.weights)) return null;  /* a legacy benchmark's scope */
    var values = P.scopes[scope] || {};
    var ids = Object.keys(values).filter(function (id) { return metric in values[id]; });
    if (!ids.length) {
      var why = P.metrics.indexOf(metric) < 0
        ? "The authors published no " + metricTitle(metric) + " numbers for LookBench v2601 (they report Fine Recall, Coarse Recall and nDCG at K = 1, 5, 10, 20)."
        : "The authors published no " + metricTitle(metric) + " numbers for " + title(scope) + ".";
      return el("p", { "class": "muted published-none", "data-scope": scope }, why);
    }
    var details = el("details", { "class": "published", "data-scope": scope });
    if (state.pubOpen) details.setAttribute("open", "");
    details.addEventListener("toggle", function () { state.pubOpen = details.open; });
    details.appendChild(el("summary", {}, "Authors' published " + metricTitle(metric) + ", " + title(scope) + ": " + ids.length +
      " models on the real release " + P.release + (P.open ? "" : " (not this board's snapshot: not comparable)")));
    details.appendChild(el("p", { "class": "muted" }, "Copied from " + P.source + "; not recomputed, not windowed, never ranked with the runs above. " +
      (scope === "overall" ? "Overall is computed here as the query-weighted mean of the four published subsets (" +
        Object.keys(P.weights).map(function (s) { return title(s) + " " + P.weights[s]; }).join(", ") + " queries)." : "")));
    var table = el("table", { "class": "published-table" }), hr = el("tr");
    ["model (registry id)", "published as", metricTitle(metric) + " %"].forEach(function (h, j) { hr.appendChild(el("th", { "class": j === 2 ? "num" : "", scope: "col" }, h)); });
    table.appendChild(el("thead")).appendChild(hr);
    var body = table.appendChild(el("tbody"));
    ids.sort(function (a, b) { return values[b][metric] - values[a][metric] || (a < b ? -1 : 1); }).forEach(function (id) {
      var tr = body.appendChild(el("tr", { "class": "published-row", "data-id": id }));
      tr.appendChild(el("td", {}, id));
      tr.appendChild(el("td", { "class": "muted" }, P.names[id] || id));
      tr.appendChild(el("td", { "class": "num" }, pct(values[id][metric])));
    });
    details.appendChild(scroller(table));
    window.lookbenchSortable(table);
    return details;
  }

  /* ---- the overview: the paper's table (lookbench.publish.reports.paper, and `lookbench tables --format`) ---- */
  var FLAG_ORDER = { date: "\u2021", data: "\u2020", unknown: "?" };
  function flagMarks(i) {
    var kinds = {};
    runFlags(i).forEach(function (f) { kinds[f.kind] = 1; });
    return Object.keys(FLAG_ORDER).filter(function (k) { return k in kinds; }).map(function (k) { return FLAG_ORDER[k]; }).join("");
  }
  /* Runs (indices) per set of queries scored on a scope, largest set first (reports.runs.query_set_groups). */
  function querySets(scope) {
    var sets = {}, groups = [];
    D.runs.forEach(function (run, i) {
      if (!keptCount(run, scope)) return;
      var qs = querySet(run, scope);
      if (!(qs.key in sets)) { sets[qs.key] = { runs: [], n: qs.n }; groups.push(sets[qs.key]); }
      sets[qs.key].runs.push(i);
    });
    return groups.sort(function (a, b) { return b.n - a.n || a.runs[0] - b.runs[0]; });
  }
  /* A run's row title in the overview and exports: its identity label (reports.comparable.identity_labels). */
  function rowTitle(i) { return D.runs[i].name; }
  function paperColumns() {
    return D.paper.columns.concat(state.distractors && distractorsKnown() ? [D.paper.distractor.column] : []);
  }
  function distractorsKnown() { return D.runs.some(function (run) { return !!run.q.ds; }); }
  /* Query sets of a block's runs on a scope, largest first (reports.runs.query_set_groups on the block). */
  function blockSets(scope, members) {
    var sets = {}, groups = [];
    members.forEach(function (i) {
      if (!keptCount(D.runs[i], scope)) return;
      var qs = querySet(D.runs[i], scope);
      if (!(qs.key in sets)) { sets[qs.key] = { runs: [], n: qs.n }; groups.push(sets[qs.key]); }
      sets[qs.key].runs.push(i);
    });
    return groups.sort(function (a, b) { return b.n - a.n || a.runs[0] - b.runs[0]; });
  }
  /* Best and tied-with-best among one block's runs of its largest query set (none for a lone run), as paper._marks. */
  function columnMarks(col, members, values) {
    var sets = blockSets(col.scope, members), inSet = (sets[0] ? sets[0].runs : []).filter(function (i) { return values[i]; });
    var marks = {}, best = null, sign = col.metric === D.paper.distractor.column.metric ? -1 : 1;
    if (inSet.length < 2) return marks;
    inSet.forEach(function (i) { if (best === null || sign * values[i].value > sign * values[best].value) best = i; });
    marks[best] = "best";
    inSet.forEach(function (i) {
      if (i === best) return;
      var t = pairTest(i, best, col.scope, col.metric);
      if (t && t.p >= D.paper.tieP) marks[i] = "tied";
    });
    return marks;
  }
  function rankedRuns(members, overall) {
    return members.slice().sort(function (a, b) {
      var va = overall[a], vb = overall[b];
      if (!va !== !vb) return va ? -1 : 1;
      return (va && vb ? vb.value - va.value : 0) || a - b;
    });
  }
  function paperModel() {
    var P = D.paper, base = state.baseline, rows = [], columns = paperColumns(), overallSets = querySets("overall");
    var values = columns.map(function (col) { return D.runs.map(function (run) { return estimate(run, col.scope, col.metric); }); });
    var overall = D.runs.map(function (run) { return estimate(run, "overall", P.overallMetric); });
    D.groups.forEach(function (g, gi) {
      var marks = columns.map(function (col, j) { return columnMarks(col, g.runs, values[j]); });
      rankedRuns(g.runs, overall).forEach(function (i, r) {
        var diff = null;
        if (base !== null && i !== base && g.runs.indexOf(base) >= 0 && overallSets.some(function (s) { return s.runs.indexOf(i) >= 0 && s.runs.indexOf(base) >= 0; })) {
          diff = pairTest(i, base, "overall", P.overallMetric);
        }
        var label = (rowTitle(i) + " " + flagMarks(i)).replace(/\s+$/, "");
        rows.push({ run: i, group: gi, rank: r + 1, label: label, diff: diff, cells: columns.map(function (_, j) { return { value: values[j][i], mark: marks[j][i] || "" }; }) });
      });
    });
    return { rows: rows, baseline: base === null ? null : rowTitle(base), columns: columns };
  }
  function blocks(model) {
    return D.groups.map(function (g, gi) { return { title: g.title, rows: model.rows.filter(function (r) { return r.group === gi; }) }; });
  }
  /* Python's f"{x:.Nf}": toFixed, except exact binary ties round to even */
  function fixed(x, digits) {
    if (x < 0 || Object.is(x, -0)) return "-" + fixed(-x, digits);
    var scale = Math.pow(10, digits), y = x * scale * 2;
    if (Number.isInteger(y) && y % 2 !== 0 && y / (scale * 2) === x) {
      var lower = (y - 1) / 2;
      return ((lower % 2 === 0 ? lower : lower + 1) / scale).toFixed(digits);
    }
    return x.toFixed(digits);
  }
  function signed(x) { var t = fixed(x, 2); return t.charAt(0) === "-" ? t : "+" + t; }
  function halfWidth(v) { return fixed(50 * (v.hi - v.lo), 1); }
  /* Outfit recall with no outfit scored (or every one): the bootstrap interval is one point, so the outfit count
     and the exact (Clopper-Pearson) 95% interval, as lookbench.metrics.exact.edge_interval, are shown instead. */
  function exactOutfits(metric, value, lo, hi, n) {
    if (metric !== OUTFIT || lo !== hi || !(n > 0) || (value !== 0 && value !== 1)) return null;
    var edge = 1 - Math.pow(0.025, 1 / n);
    var low = value === 0 ? 0 : 1 - edge, high = value === 0 ? edge : 1;
    return Math.round(value * n) + "/" + n + " outfits; exact 95% [" + pct(low) + ", " + pct(high) + "]";
  }
  function diffText(row, model) {
    if (model.baseline === null) return "";
    if (row.run === state.baseline) return "baseline";
    var d = row.diff;
    return d ? signed(100 * d.diff) + " [" + signed(100 * d.lo) + ", " + signed(100 * d.hi) + "]" : "\u2013";
  }
  function caption(model, tied) {
    var extra = model.columns.length > D.paper.columns.length ? D.paper.distractor.caption : "";
    return D.paper.caption[tied] + extra + (model.baseline === null ? "" : D.paper.difference.replace("{baseline}", model.baseline));
  }
  function markdownCell(text) {
    // as lookbench._util.safetext.markdown_cell: one line, HTML escaped, every character that makes markup backslash-escaped
    return oneLine(text).replace(/[\\`*_\[\]|!]/g, "\\$&").replace(/&/g, "&amp;").replace(/\x3c/g, "&lt;").replace(/\x3e/g, "&gt;");
  }
  function oneLine(text) { return text.split(/\s+/).filter(Boolean).join(" "); }
  function exportMarkdown(model) {
    var head = ["#", "model"].concat(model.columns.map(function (c) { return c.title; }));
    if (model.baseline !== null) head.push("\u0394 vs " + model.baseline + " (pts)");
    var parts = blocks(model).map(function (b) {
      var lines = ["**" + markdownCell(b.title) + "**", "", "| " + head.join(" | ") + " |", "|---:|---|" + new Array(head.length - 1).join("---:|")];
      b.rows.forEach(function (row) {
        var cells = row.cells.map(function (c) {
          var text = c.value ? pct(c.value.value) + " \u00b1" + halfWidth(c.value) : "-";
          return c.mark === "best" ? "**" + text + "**" : c.mark === "tied" ? "_" + text + "_" : text;
        });
        if (model.baseline !== null) cells.push(diffText(row, model));
        lines.push("| " + [String(row.rank), markdownCell(row.label)].concat(cells).join(" | ") + " |");
      });
      return lines.join("\n");
    });
    return parts.join("\n\n") + "\n\n" + caption(model, "italics") + "\n";
  }
  function csvField(text) {
    // as lookbench._util.safetext.csv_cell: a cell a spreadsheet would run as a formula gets a leading quote
    if (/^[=+\-@\t\r]/.test(text) && !/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(text)) text = "'" + text;
    return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }
  function exportCsv(model) {
    var head = ["block", "rank", "run", "release", "model"];
    model.columns.forEach(function (c) { head.push(c.title, c.title + " ci_low", c.title + " ci_high", c.title + " n", c.title + " mark"); });
    if (model.baseline !== null) head.push("diff vs baseline", "diff ci_low", "diff ci_high", "diff p");
    var lines = [head.map(csvField).join(",")];
    model.rows.forEach(function (row) {
      var line = [D.groups[row.group].title, String(row.rank), D.runs[row.run].id, D.runs[row.run].snapshot, row.label];
      row.cells.forEach(function (c) {
        var v = c.value;
        line = line.concat(v ? [pct(v.value), fixed(100 * v.lo, 2), fixed(100 * v.hi, 2), String(v.n), c.mark] : ["", "", "", "", ""]);
      });
      if (model.baseline !== null) {
        var d = row.diff;
        line = line.concat(d ? [fixed(100 * d.diff, 2), fixed(100 * d.lo, 2), fixed(100 * d.hi, 2), fixed(d.p, 4)] : ["", "", "", ""]);
      }
      lines.push(line.map(csvField).join(","));
    });
    return lines.join("\n") + "\n";
  }
  function latex(text) { return Array.from(oneLine(text)).map(function (ch) { return D.paper.latex[ch] || ch; }).join(""); }
  function exportLatex(model) {
    var cols = model.columns, spans = [], diff = model.baseline !== null;
    cols.forEach(function (c) {
      var last = spans[spans.length - 1];
      if (last && last.scope === c.scope) last.n += 1; else spans.push({ scope: c.scope, title: c.group, n: 1 });
    });
    var spec = "rl" + spans.map(function (s) { return " " + new Array(s.n + 1).join("r"); }).join("") + (diff ? " r" : "");
    var width = cols.length + 2 + (diff ? 1 : 0);
    var lines = ["\\begin{table}[t]", "\\centering", "\\small", "\\caption{" + latex(caption(model, "underlined")) + "}",
      "\\label{tab:lookbench}", "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%", "\\begin{tabular}{" + spec + "}", "\\toprule"];
    var top = ["", ""], rules = [], at = 3;
    spans.forEach(function (s) {
      top.push("\\multicolumn{" + s.n + "}{c}{" + latex(s.title) + "}");
      rules.push("\\cmidrule(lr){" + at + "-" + (at + s.n - 1) + "}");
      at += s.n;
    });
    if (diff) top.push(latex("\u0394 vs " + model.baseline));
    lines.push(top.join(" & ") + " \\\\");
    lines.push(rules.join(" "));
    lines.push(["\\#", "Model"].concat(cols.map(function (c) { return latex(c.short); }), diff ? ["pts [95\\% CI]"] : []).join(" & ") + " \\\\");
    blocks(model).forEach(function (b) {
      lines.push("\\midrule", "\\multicolumn{" + width + "}{l}{\\textit{" + latex(b.title) + "}} \\\\");
      b.rows.forEach(function (row) { lines.push(latexRow(row, model)); });
    });
    lines.push("\\bottomrule", "\\end{tabular}}", "\\end{table}");
    return lines.join("\n") + "\n";
  }
  function latexRow(row, model) {
    var cells = [String(row.rank), latex(row.label)];
    row.cells.forEach(function (c) {
      if (!c.value) { cells.push("--"); return; }
      var v = pct(c.value.value);
      v = c.mark === "best" ? "\\textbf{" + v + "}" : c.mark ? "\\underline{" + v + "}" : v;
      cells.push(v + "{\\scriptsize$\\pm$" + halfWidth(c.value) + "}");
    });
    if (model.baseline !== null) cells.push(latex(diffText(row, model)));
    return cells.join(" & ") + " \\\\";
  }
  var EXPORTS = { latex: [exportLatex, "paper.tex", "text/x-tex"], csv: [exportCsv, "paper.csv", "text/csv"], markdown: [exportMarkdown, "paper.md", "text/markdown"] };
  /* Model facts as columns: [key, header, the run's value (null: not known), its text, why it is missing]; the
     card's facts as sitedata records them, and the submission's verification. */
  var NOT_ON_CARD = "not on the model card";
  var FACTS = [
    ["params", "Params", function (r) { return r.params; }, count, NOT_ON_CARD + " (or not a count)"],
    ["dim", "Dim", function (r) { return r.embedDim === null ? null : Number(r.embedDim); }, String, NOT_ON_CARD],
    ["open", "Open weights", function (r) { return r.openWeights; }, function (v) { return v === "true" ? "yes" : "no"; }, NOT_ON_CARD],
    ["lic", "Licence", function (r) { return r.license; }, String, NOT_ON_CARD],
    ["cutoff", "Cutoff", function (r) { return r.cutoffText; }, String, NOT_ON_CARD],
    ["ver", "Verified", function (r) { return r.verification ? r.verification.status : null; }, String, "not checked: not from a results repository"]
  ];
  var FACT_KEYS = FACTS.map(function (f) { return "f-" + f[0]; });
  function factOf(key) { return FACTS.filter(function (f) { return "f-" + f[0] === key; })[0]; }
  /* Whether a run passes the headline filters (open weights only, verified only, one licence). */
  function passes(i) {
    var run = D.runs[i], f = state.filter;
    return (!f.open || run.openWeights === "true") && (!f.verified || !!(run.verification && run.verification.status === "verified")) &&
      (!f.license || run.license === f.license);
  }
  function filtering() { return state.filter.open || state.filter.verified || !!state.filter.license; }
  function licences() {
    var seen = {};
    D.runs.forEach(function (run) { if (run.license) seen[run.license] = 1; });
    return Object.keys(seen).sort();
  }
  function factOrder(a, b, key, sign) {
    var get = factOf(key)[2], va = get(D.runs[a.run]), vb = get(D.runs[b.run]);
    if ((va === null) !== (vb === null)) return va === null ? 1 : -1;
    if (va === null) return a.rank - b.rank;
    var d = typeof va === "number" ? va - vb : String(va).localeCompare(String(vb));
    return sign * d || a.rank - b.rank;
  }
  /* The headline table: one block (release, window, noise) at a time, Overall first, sortable by any column. */
  function overviewOrder(rows, sort) {
    if (sort.key === "rank") return sort.dir === "asc" ? rows : rows.slice().reverse();
    var sign = sort.dir === "desc" ? -1 : 1, j = /^c\d+$/.test(sort.key) ? Number(sort.key.slice(1)) : null;
    return rows.slice().sort(function (a, b) {
      if (sort.key === "model") return sign * a.label.localeCompare(b.label) || a.rank - b.rank;
      if (sort.key.indexOf("f-") === 0) return factOrder(a, b, sort.key, sign);
      var va = j === null ? (a.diff ? a.diff.diff : null) : (a.cells[j].value ? a.cells[j].value.value : null);
      var vb = j === null ? (b.diff ? b.diff.diff : null) : (b.cells[j].value ? b.cells[j].value.value : null);
      if ((va === null) !== (vb === null)) return va === null ? 1 : -1;
      return (va === null ? 0 : sign * (va - vb)) || a.rank - b.rank;
    });
  }
  function overviewHead(model, shown) {
    var head = el("thead"), top = el("tr"), sub = el("tr"), spans = [], cols = model.columns;
    top.appendChild(sortHeader("#", "rank", state.osort, true, renderAndSave)).setAttribute("rowspan", 2);
    top.appendChild(sortHeader("model", "model", state.osort, false, renderAndSave)).setAttribute("rowspan", 2);
    top.lastChild.classList.add("model");
    shown.forEach(function (j) { var c = cols[j], last = spans[spans.length - 1]; if (last && last.scope === c.scope) last.n += 1; else spans.push({ scope: c.scope, title: c.group, n: 1 }); });
    spans.forEach(function (s) { top.appendChild(el("th", { colspan: s.n, scope: "colgroup", "class": "group" + (s.scope === "overall" ? " overall" : "") }, s.title)); });
    shown.forEach(function (j) {
      var label = el("span");
      label.appendChild(el("span", { "class": "col-scope" }, cols[j].group + " "));
      label.appendChild(document.createTextNode(cols[j].short));
      sub.appendChild(sortHeader(label, "c" + j, state.osort, true, renderAndSave));
    });
    FACTS.forEach(function (f) {
      var th = top.appendChild(sortHeader(f[1], "f-" + f[0], state.osort, f[0] === "params" || f[0] === "dim", renderAndSave));
      th.setAttribute("rowspan", 2);
      th.classList.add("fact-col");
    });
    if (model.baseline !== null) top.appendChild(sortHeader("\u0394 vs " + model.baseline + " (pts, 95% CI)", "diff", state.osort, true, renderAndSave)).setAttribute("rowspan", 2);
    head.appendChild(top);
    head.appendChild(sub);
    return head;
  }
  function overviewRow(row, model, shown) {
    var tr = el("tr", { "data-run": row.run, "data-rank": row.rank }), cols = model.columns;
    tr.appendChild(el("td", { "class": "num rank", "data-label": "rank" }, String(row.rank)));
    var name = tr.appendChild(el("th", { scope: "row", "class": "model" }));
    name.appendChild(runName(row.run, true));
    shown.forEach(function (j) {
      var c = row.cells[j], col = cols[j];
      var td = tr.appendChild(el("td", { "class": "num" + (c.mark ? " " + c.mark : ""), "data-scope": col.scope, "data-metric": col.metric, "data-mark": c.mark, "data-label": col.title }));
      if (!c.value) { td.textContent = "\u2013"; return; }
      td.appendChild(el("span", { "class": "v" }, pct(c.value.value)));
      td.appendChild(el("span", { "class": "pm" }, "\u00b1" + halfWidth(c.value)));
      if (c.mark) td.appendChild(el("span", { "class": "mark-word" }, c.mark === "best" ? "best" : "tied"));
    });
    FACTS.forEach(function (f) {
      var value = f[2](D.runs[row.run]), numeric = f[0] === "params" || f[0] === "dim";
      var td = tr.appendChild(el("td", { "class": "fact-col" + (numeric ? " num" : ""), "data-fact": f[0], "data-label": f[1] }));
      if (value === null) { td.textContent = "\u2013"; td.setAttribute("title", f[4]); td.classList.add("missing"); return; }
      td.setAttribute("data-value", String(value));
      td.textContent = f[3](value);
    });
    if (model.baseline !== null) tr.appendChild(el("td", { "class": "num diff", "data-label": "\u0394 vs baseline" }, diffText(row, model)));
    return tr;
  }
  function renderOverview() {
    var model = paperModel(), host = clear(byId("paper")), cols = model.columns;
    var block = Math.min(state.group, D.groups.length - 1);
    byId("release").value = String(block);
    var shown = cols.map(function (_, j) { return j; });
    shown = shown.filter(function (j) { return cols[j].scope === "overall"; }).concat(shown.filter(function (j) { return cols[j].scope !== "overall"; }));
    var table = el("table", { "class": "paper headline" + (state.facts ? "" : " facts-hidden"), "data-block": block });
    table.appendChild(el("caption", { "class": "block-title" }, D.groups[block].title));
    table.appendChild(overviewHead(model, shown));
    var body = table.appendChild(el("tbody"));
    var all = model.rows.filter(function (r) { return r.group === block; });
    var rows = overviewOrder(all.filter(function (r) { return passes(r.run); }), state.osort);
    rows.forEach(function (row) { body.appendChild(overviewRow(row, model, shown)); });
    host.appendChild(scroller(table));
    byId("filter-note").textContent = !filtering() ? "" : (rows.length ? rows.length + " of " + all.length + " runs of this block match the filters; they keep their ranks in the whole block (exports list every run)."
      : "No run of this block matches the filters.");
    byId("paper-caption").textContent = caption(model, "underlined") + (windowed() ? " Page window: " + windowWords(state.since, state.until) + "." : "");
    var out = byId("export-text");
    if (state.exportFormat) {
      var e = EXPORTS[state.exportFormat], text = e[0](model);
      byId("export").hidden = false;
      out.value = text;
      var link = byId("export-download");
      link.setAttribute("download", e[1]);
      link.setAttribute("href", "data:" + e[2] + ";charset=utf-8," + encodeURIComponent(text));
      link.textContent = "download " + e[1];
    } else {
      byId("export").hidden = true;
    }
  }

  /* ---- the series across releases ---- */
  /* A model's score per release (dot), its interval (whisker) and its cutoff bound (dashed line, at its own date),
     on a scale shared by every model's chart so they compare, with a y-axis in percent; releases and cutoffs are
     placed by date. */
  var SPARK = { w: 196, h: 64, pad: 8, left: 36 };
  function seriesScale(S) {
    var lo = 1, hi = 0, days = S.releases.map(function (r) { return Date.parse(r.date) / DAY; });
    S.models.forEach(function (m) {
      if (m.bound) days.push(Date.parse(m.bound.day) / DAY);
      Object.keys(m.runs).forEach(function (id) {
        var v = (D.runs[m.runs[id]].metrics.overall || {})[S.metric];
        if (v) { lo = Math.min(lo, v.lo); hi = Math.max(hi, v.hi); }
      });
    });
    if (hi < lo) { lo = 0; hi = 1; }
    if (hi - lo < 0.02) { lo -= 0.01; hi += 0.01; }
    var first = Math.min.apply(null, days), span = Math.max(Math.max.apply(null, days) - first, 1);
    var inner = SPARK.w - SPARK.left - SPARK.pad;
    return {
      lo: lo, hi: hi,
      x: function (day) { return SPARK.left + inner * Math.max(0, Math.min(1, (day - first) / span)); },
      y: function (v) { return SPARK.pad + (SPARK.h - 2 * SPARK.pad) * (hi - v) / (hi - lo); }
    };
  }
  function seriesAxes(svg, scale) {
    var x = SPARK.left - 2;
    svg.appendChild(svgEl("line", { "class": "axis", x1: x, x2: SPARK.w - SPARK.pad, y1: SPARK.h - 2, y2: SPARK.h - 2 }));
    svg.appendChild(svgEl("line", { "class": "axis y-axis", x1: x, x2: x, y1: scale.y(scale.hi), y2: scale.y(scale.lo) }));
    [scale.hi, scale.lo].forEach(function (v, j) {
      svg.appendChild(svgEl("text", { "class": "tick", x: x - 2, y: scale.y(v) + (j ? 0 : 6), "text-anchor": "end", "data-value": v }, fixed(100 * v, 1)));
    });
  }
  function seriesChart(S, m, scale) {
    var svg = svgEl("svg", { "class": "spark", viewBox: "0 0 " + SPARK.w + " " + SPARK.h, width: SPARK.w, height: SPARK.h, role: "img",
      "aria-label": m.model + ": " + metricTitle(S.metric) + " per release, " + fixed(100 * scale.lo, 1) + " to " + fixed(100 * scale.hi, 1) + " %" });
    seriesAxes(svg, scale);
    if (m.bound) {
      var cx = scale.x(Date.parse(m.bound.day) / DAY);
      var cut = svg.appendChild(svgEl("line", { "class": "cutoff" + (m.bound.release ? " release-bound" : ""), "data-day": m.bound.day, x1: cx, x2: cx, y1: 2, y2: SPARK.h - 2 }));
      cut.appendChild(svgEl("title", {}, (m.bound.release ? "release date " : "training cutoff ") + m.bound.text));
    }
    var points = [];
    S.releases.forEach(function (r) {
      var i = m.runs[r.id], v = i === undefined ? null : (D.runs[i].metrics.overall || {})[S.metric];
      if (!v) return;
      var x = scale.x(Date.parse(r.date) / DAY);
      points.push(x + "," + scale.y(v.v));
      svg.appendChild(svgEl("line", { "class": "whisker", "data-release": r.id, x1: x, x2: x, y1: scale.y(v.hi), y2: scale.y(v.lo) }));
    });
    if (points.length > 1) svg.appendChild(svgEl("polyline", { "class": "trend", points: points.join(" ") }));
    S.releases.forEach(function (r) {
      var i = m.runs[r.id], v = i === undefined ? null : (D.runs[i].metrics.overall || {})[S.metric];
      if (!v) return;
      var dot = svg.appendChild(svgEl("circle", { "class": "pt", "data-release": r.id, "data-value": v.v, cx: scale.x(Date.parse(r.date) / DAY), cy: scale.y(v.v), r: 3 }));
      dot.appendChild(svgEl("title", {}, r.id + ": " + pct(v.v) + " [" + pct(v.lo) + ", " + pct(v.hi) + "]"));
    });
    return svg;
  }
  function renderSeries() {
    var S = D.series, section = byId("series");
    section.hidden = !S;
    if (!S) return;
    var host = clear(byId("series-table")), table = el("table", { "class": "series" }), head = el("tr");
    head.appendChild(el("th", { scope: "col" }, "model"));
    S.releases.forEach(function (r) { head.appendChild(el("th", { scope: "col", "class": "num", title: "content " + r.hashes.join(", ") }, r.id + " (" + r.date + ")")); });
    head.appendChild(el("th", { scope: "col" }, "per release"));
    ["cutoff bound", "after \u2212 before cutoff, pts [95% CI] (queries)", "run on"].forEach(function (h) { head.appendChild(el("th", { scope: "col" }, h)); });
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody")), scale = seriesScale(S);
    S.models.forEach(function (m) {
      var tr = body.appendChild(el("tr", { "data-model": m.model }));
      tr.appendChild(el("th", { scope: "row", "class": "model" }, m.model));
      S.releases.forEach(function (r) {
        var i = m.runs[r.id], td = tr.appendChild(el("td", { "class": "num", "data-release": r.id }));
        if (i === undefined) { td.textContent = "not run"; td.className += " muted"; return; }
        var v = (D.runs[i].metrics.overall || {})[S.metric];
        if (!v) { td.textContent = "\u2013"; return; }
        td.appendChild(el("a", { href: "#model-" + i }, pct(v.v)));
        var exact = exactOutfits(S.metric, v.v, v.lo, v.hi, v.n);
        td.appendChild(el("span", { "class": "pm" }, exact ? " (" + exact + ")" : " \u00b1" + fixed(50 * (v.hi - v.lo), 1)));
        if (m.bound) {
          var after = r.date > m.bound.day;
          td.appendChild(el("span", { "class": "mark-word " + (after ? "after-cutoff" : "before-cutoff") }, after ? "after cutoff" : "on/before cutoff"));
        }
      });
      tr.appendChild(el("td", { "class": "release-chart" })).appendChild(seriesChart(S, m, scale));
      tr.appendChild(el("td", {}, m.bound ? (m.bound.release ? "release date " + m.bound.text + " (no cutoff declared)" : "training cutoff " + m.bound.text) : "unknown"));
      var sp = m.split;
      tr.appendChild(el("td", { "class": "num split" }, sp
        ? signed(100 * sp.diff) + " [" + signed(100 * sp.ci_low) + ", " + signed(100 * sp.ci_high) + "] (" + sp.before + " / " + sp.after + ")"
        : "\u2013 " + m.splitNote));
      tr.appendChild(el("td", { "class": "releases" }, Object.keys(m.runs).sort().join(", ")));
    });
    host.appendChild(scroller(table));
  }

  /* ---- the window control ---- */
  function renderWindowStatus() {
    var list = clear(byId("window-counts"));
    byId("window-status").textContent = windowed()
      ? "Page window: queries first seen " + windowWords(state.since, state.until) + " (outfits kept or dropped whole)"
      : "Page window: none; each run as evaluated";
    D.runs.forEach(function (run, i) {
      var n = run.q.s.length, k = keptCount(run, "*");
      list.appendChild(el("li", { "data-run": i, "data-kept": k, "data-total": n }, run.title + ": " + k + " of " + n + " queries"));
    });
    var since = byId("since"), until = byId("until");
    since.value = state.since === null ? "" : dayText(state.since);
    until.value = state.until === null ? "" : dayText(state.until);
    if (range.min !== null) {
      byId("since-range").value = state.since === null ? range.min : Math.max(range.min, Math.min(range.max, state.since));
      byId("until-range").value = state.until === null ? range.max : Math.max(range.min, Math.min(range.max, state.until));
    }
    renderRangeLabels();
  }
  function renderRangeLabels() {
    if (range.min === null) return;
    byId("range-values").textContent = dayText(Number(byId("since-range").value)) + " \u2013 " + dayText(Number(byId("until-range").value));
  }
  function setWindow(since, until) {
    var error = byId("window-error");
    if (since !== null && until !== null && since > until) {
      error.textContent = "since (" + dayText(since) + ") is after until (" + dayText(until) + "): the window was not changed.";
      return false;
    }
    error.textContent = "";
    state.since = since;
    state.until = until;
    renderAndSave();
    return true;
  }
  function dateInput(id) {
    var text = byId(id).value;
    if (!text) return { ok: true, day: null };
    var day = parseDay(text);
    return { ok: day !== null, day: day, text: text };
  }
  function applyInputs() {
    var s = dateInput("since"), u = dateInput("until");
    if (!s.ok || !u.ok) {
      byId("window-error").textContent = "not a date (YYYY-MM-DD): " + (s.ok ? u.text : s.text);
      return;
    }
    setWindow(s.day, u.day);
  }
  function sliderChanged(which) {
    var lo = Number(byId("since-range").value), hi = Number(byId("until-range").value);
    if (lo > hi) {
      if (which === "since") lo = hi; else hi = lo;
      byId("since-range").value = lo;
      byId("until-range").value = hi;
    }
    renderRangeLabels();
    return [lo === range.min ? null : lo, hi === range.max ? null : hi];
  }
  function dateStrip() {
    var host = clear(byId("date-strip"));
    if (range.min === null) { host.appendChild(el("p", { "class": "muted" }, "No query has a date: windows keep nothing.")); return; }
    var counts = {}, seen = {}, peak = 1, W = 600, H = 64, y0 = 44;
    var span = Math.max(range.max - range.min, 1), bar = Math.max(Math.min((W - 12) / (span + 1) - 1, 40), 1);
    var x0 = 6 + bar / 2, x1 = W - 6 - bar / 2;
    D.queries.forEach(function (shared) {
      shared.d.forEach(function (d, i) {
        var key = shared.s[i] + "/" + shared.r[i];
        if (d === null || key in seen) return;
        seen[key] = 1;
        counts[d] = (counts[d] || 0) + 1;
        peak = Math.max(peak, counts[d]);
      });
    });
    function x(d) { return x0 + (d - range.min) / span * (x1 - x0); }
    var svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "queries per day and model cutoffs", preserveAspectRatio: "none" });
    svg.appendChild(svgEl("title", {}, "Queries first seen per day, " + dayText(range.min) + " to " + dayText(range.max) + "; dashed: model training cutoffs"));
    Object.keys(counts).forEach(function (d) {
      var h = counts[d] / peak * 36;
      var rect = svgEl("rect", { x: x(Number(d)) - bar / 2, y: y0 - h, width: bar, height: h, "class": "day" });
      rect.appendChild(svgEl("title", {}, dayText(Number(d)) + ": " + counts[d] + " queries"));
      svg.appendChild(rect);
    });
    svg.appendChild(svgEl("line", { x1: x0, x2: x1, y1: y0, y2: y0, stroke: "#999" }));
    D.runs.forEach(function (run, i) {
      if (!run.bound) return;
      var d = parseDay(run.bound.day);
      if (d < range.min || d > range.max) return;
      var line = svgEl("line", { x1: x(d), x2: x(d), y1: 2, y2: y0, "class": "cutoff" + (run.bound.release ? " release-bound" : ""), "data-run": i, stroke: PALETTE[i % PALETTE.length] });
      line.appendChild(svgEl("title", {}, run.title + ": " + boundWords(run)));
      svg.appendChild(line);
    });
    host.appendChild(svg);
    var list = clear(byId("cutoff-list"));
    D.runs.forEach(function (run, i) {
      if (!run.bound) return;
      var d = parseDay(run.bound.day), li = list.appendChild(el("li", { "data-run": i, "class": run.bound.release ? "release-bound" : "" }));
      li.appendChild(el("span", { "class": "swatch", style: "background:" + PALETTE[i % PALETTE.length] }));
      li.appendChild(document.createTextNode(run.title + ": " + boundWords(run) +
        (d < range.min ? " (before every query)" : d > range.max ? " (after every query)" : "") + " "));
      if (d >= range.min && d < range.max) {
        var b = li.appendChild(el("button", { type: "button", "class": "after-cutoff" }, "queries after it"));
        b.addEventListener("click", function () { setWindow(d + 1, state.until !== null && state.until < d + 1 ? null : state.until); });
      }
    });
  }
  /* "training cutoff 2025-05", or the release date standing in for a cutoff the card does not declare */
  function boundWords(run) {
    return run.bound.release
      ? "release date " + run.bound.text + " (no training cutoff declared; the release date bounds it)"
      : "training cutoff " + run.bound.text;
  }

  /* ---- breakdowns ---- */
  function blockMeans(pick) {
    var inBlock = {};
    blockRuns().forEach(function (i) { inBlock[i] = 1; });
    return D.runs.map(function (run, i) { return i in inBlock ? pick(run) : {}; });
  }
  function groupMeans(run, scope, metric, key) {
    var q = run.q, sums = {}, counts = {};
    if (!hasValues(q, metric)) return {};
    for (var i = 0; i < q.s.length; i++) {
      if (!inScope(q, i, scope) || !kept(q, i)) continue;
      var found = key(q, i), value = queryValue(q, i, metric);
      if (found === null || value === null) continue;
      /* a key may name several groups (a two-change query counts in both changed groups) */
      (Array.isArray(found) ? found : [found]).forEach(function (g) {
        sums[g] = (sums[g] || 0) + value;
        counts[g] = (counts[g] || 0) + 1;
      });
    }
    var out = {};
    Object.keys(sums).forEach(function (g) { out[g] = { v: sums[g] / counts[g], n: counts[g] }; });
    return out;
  }
  function sortedGroups(perRun) {
    var counts = {};
    perRun.forEach(function (means) { Object.keys(means).forEach(function (g) { counts[g] = Math.max(counts[g] || 0, means[g].n); }); });
    var names = Object.keys(counts);
    var sort = state.bsort, sign = sort.dir === "desc" ? -1 : 1;
    function value(g) {
      if (sort.key === "count") return counts[g];
      var m = perRun[Number(sort.key.slice(4))] && perRun[Number(sort.key.slice(4))][g];
      return m ? m.v : -1;
    }
    return names.sort(function (a, b) {
      var c = sort.key === "group" ? a.localeCompare(b) : value(a) - value(b);
      return sign * c || counts[b] - counts[a] || (a < b ? -1 : 1);
    });
  }
  function breakdownTable(id, what, groups, perRun, metric) {
    var host = clear(byId(id));
    var table = el("table", { "class": "breakdown", "data-what": what }), head = el("tr");
    head.appendChild(sortHeader(what, "group", state.bsort, false, renderAndSave));
    head.appendChild(sortHeader("queries", "count", state.bsort, true, renderAndSave));
    blockRuns().forEach(function (i) {
      var label = el("span");
      label.appendChild(runName(i, true, true));
      label.appendChild(el("span", { "class": "unit" }, " " + metricTitle(metric) + " % (queries)"));
      head.appendChild(sortHeader(label, "run-" + i, state.bsort, true, renderAndSave));
    });
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody"));
    groups.forEach(function (g) {
      var tr = body.appendChild(el("tr", { "data-group": g }));
      tr.appendChild(el("th", { scope: "row" }, g));
      tr.appendChild(el("td", { "class": "num" }, Math.max.apply(null, perRun.map(function (m) { return m[g] ? m[g].n : 0; }))));
      blockRuns().forEach(function (i) {
        var m = perRun[i][g];
        tr.appendChild(el("td", { "class": "num", "data-run": i }, m ? pct(m.v) + " (" + m.n + ")" : "\u2013"));
      });
    });
    host.appendChild(scroller(table, groups.length > 20));
  }
  /* The runs of the release block chosen in the overview: breakdowns never set two releases side by side. */
  function blockRuns() { return D.groups[Math.min(state.group, D.groups.length - 1)].runs; }
  function renderBreakdowns() {
    var metric = metricName() === OUTFIT ? "fine_recall@1" : metricName(), scope = chartScope();
    byId("breakdown-note").textContent = "Runs of " + D.groups[Math.min(state.group, D.groups.length - 1)].title + " (the release chosen above). " + metricTitle(metric) + " on " + title(scope) +
      (metricName() === OUTFIT ? " (outfit recall has no per-garment breakdown, so Fine Recall@1 is shown)" : "") +
      ": mean % over the queries of each group, with their count in brackets; click a column title to sort.";
    var cats = blockMeans(function (run) { return groupMeans(run, scope, metric, function (q, i) { return D.categories[q.g[i]]; }); });
    breakdownTable("categories", "category", sortedGroups(cats), cats, metric);
    var note = byId("attribute-note");
    if (!D.attributesKnown) {
      note.textContent = "The snapshot of at least one run was not reachable when the site was built, so only the per-category breakdown is shown.";
      clear(byId("attributes"));
    } else {
      note.textContent = "";
      var attrs = blockMeans(function (run) { return groupMeans(run, scope, metric, function (q, i) { return q.a[i] < 0 ? null : D.attributes[q.a[i]]; }); });
      breakdownTable("attributes", "query main attribute", sortedGroups(attrs), attrs, metric);
    }
    var composedScope = scope in COMPOSED || scope === "composed_overall";
    byId("composed-breakdowns").hidden = !composedScope;
    if (composedScope) {
      var changed = blockMeans(function (run) { return groupMeans(run, scope, metric, function (q, i) { return q.cg ? q.cg[i] : null; }); });
      breakdownTable("change-groups", "changed attribute group", sortedGroups(changed), changed, metric);
      var counted = blockMeans(function (run) { return groupMeans(run, scope, metric, function (q, i) { return q.nc && q.nc[i] !== null ? String(q.nc[i]) : null; }); });
      breakdownTable("change-counts", "number of changes", sortedGroups(counted), counted, metric);
    }
    renderCategoryChart(cats, metric);
  }

  /* ---- charts (inline SVG; legends are HTML so long names wrap instead of being cut) ---- */
  /* Chart width in user units: the box's width (so text keeps its size on phones), 300 to 560. */
  function chartWidth(host) { return Math.round(Math.max(300, Math.min(560, host.clientWidth || 560))); }
  function frame(host, w, h, heading) {
    clear(host);
    host.appendChild(el("h3", { "class": "chart-title" }, heading));
    var svg = svgEl("svg", { viewBox: "0 0 " + w + " " + h, role: "img", "aria-label": heading });
    svg.appendChild(svgEl("title", {}, heading));
    host.appendChild(svg);
    return svg;
  }
  function legend(host, runs) {
    var list = host.appendChild(el("ul", { "class": "legend" }));
    runs.forEach(function (i) {
      var li = list.appendChild(el("li", { "data-run": i }));
      li.appendChild(el("span", { "class": "swatch", style: "background:" + PALETTE[i % PALETTE.length] }));
      li.appendChild(document.createTextNode(D.runs[i].title));
    });
  }
  function yAxis(svg, x0, y0, y1, w) {
    [0, 0.25, 0.5, 0.75, 1].forEach(function (t) {
      var y = y0 - t * (y0 - y1);
      svg.appendChild(svgEl("line", { x1: x0, x2: x0 + w, y1: y, y2: y, stroke: "#eee" }));
      svg.appendChild(svgEl("text", { x: x0 - 6, y: y + 4, "text-anchor": "end" }, (100 * t).toFixed(0)));
    });
  }
  function renderRecallChart() {
    var family = /recall$/.test(state.family) && info(state.family).per_k ? state.family : "fine_recall";
    var host = byId("chart-recall"), scope = chartScope(), W = chartWidth(host), H = 260, x0 = 44, x1 = W - 20, y0 = 230, y1 = 12;
    var svg = frame(host, W, H, info(family).name + "@K on " + title(scope) + " (%)");
    yAxis(svg, x0, y0, y1, x1 - x0);
    var ks = D.ks, step = ks.length > 1 ? (x1 - x0 - 20) / (ks.length - 1) : 0, drawn = [];
    ks.forEach(function (k, j) { svg.appendChild(svgEl("text", { x: x0 + 10 + j * step, y: y0 + 18, "text-anchor": "middle" }, "K=" + k)); });
    D.runs.forEach(function (run, i) {
      var points = [];
      ks.forEach(function (k, j) {
        var u = units(run, scope, family + "@" + k);
        if (u.values.length) points.push([x0 + 10 + j * step, y0 - mean(u.values) * (y0 - y1)]);
      });
      if (!points.length) return;
      drawn.push(i);
      var color = PALETTE[i % PALETTE.length];
      var line = svgEl("polyline", { points: points.map(function (p) { return p.join(","); }).join(" "), fill: "none", stroke: color, "stroke-width": 2, "class": "curve", "data-run": i });
      line.appendChild(svgEl("title", {}, run.title));
      svg.appendChild(line);
      points.forEach(function (p) { svg.appendChild(svgEl("circle", { cx: p[0], cy: p[1], r: 3, fill: color })); });
    });
    legend(host, drawn);
  }
  function renderCategoryChart(cats, metric) {
    var groups = Object.keys(cats.reduce(function (all, means) { Object.keys(means).forEach(function (g) { all[g] = 1; }); return all; }, {})).sort();
    var runs = D.runs.map(function (_, i) { return i; }).filter(function (i) { return Object.keys(cats[i]).length; });
    var host = byId("chart-categories"), W = chartWidth(host);
    var bar = 9, pad = 8, rowH = Math.max(runs.length, 1) * bar + pad, x0 = 100, x1 = W - 20, top = 8;
    var H = top + groups.length * rowH + 26;
    var svg = frame(host, W, H, metricTitle(metric) + " per category on " + title(chartScope()) + " (%), every category");
    [0, 0.25, 0.5, 0.75, 1].forEach(function (t) {
      var x = x0 + t * (x1 - x0);
      svg.appendChild(svgEl("line", { x1: x, x2: x, y1: top, y2: H - 20, stroke: "#eee" }));
      svg.appendChild(svgEl("text", { x: x, y: H - 6, "text-anchor": "middle" }, (100 * t).toFixed(0)));
    });
    groups.forEach(function (g, j) {
      var gy = top + j * rowH;
      var label = svgEl("text", { x: x0 - 6, y: gy + rowH / 2 + 3, "text-anchor": "end", "class": "category-label" }, g.length > 18 ? g.slice(0, 17) + "\u2026" : g);
      label.appendChild(svgEl("title", {}, g));
      svg.appendChild(label);
      runs.forEach(function (i, r) {
        var m = cats[i][g];
        if (!m) return;
        var rect = svgEl("rect", { x: x0, y: gy + pad / 2 + r * bar, width: Math.max(m.v * (x1 - x0), 0.5), height: bar - 1, fill: PALETTE[i % PALETTE.length], "class": "bar", "data-run": i, "data-group": g });
        rect.appendChild(svgEl("title", {}, D.runs[i].title + " / " + g + ": " + pct(m.v) + "% (" + m.n + " queries)"));
        svg.appendChild(rect);
      });
    });
    legend(host, runs);
  }
  function renderScatter() {
    var axis = state.x, metric = metricName(), host = byId("chart-scatter");
    var W = chartWidth(host), H = 280, x0 = 44, x1 = W - 12, y0 = 246, y1 = 14, CHAR = 6.2, placed = [];
    var svg = frame(host, W, H, metricTitle(metric) + " on Overall (%) against " + (axis === "params" ? "parameters (log scale)" : "images embedded per second (log scale)"));
    yAxis(svg, x0, y0, y1, x1 - x0);
    var pts = [], missing = [];
    D.runs.forEach(function (run, i) {
      var x = axis === "params" ? run.params : run.throughput;
      var u = units(run, "overall", metric);
      if (!u.values.length) return;
      if (x && x > 0) pts.push({ i: i, x: Math.log10(x), y: mean(u.values), raw: x });
      else missing.push([i, axis === "params" ? "its model card gives no parameter count" : run.throughputNote]);
    });
    if (pts.length) {
      var lo = Math.min.apply(null, pts.map(function (p) { return p.x; })) - 0.3, hi = Math.max.apply(null, pts.map(function (p) { return p.x; })) + 0.3;
      for (var e = Math.ceil(lo); e <= Math.floor(hi); e++) {
        var tx = x0 + (e - lo) / (hi - lo) * (x1 - x0);
        svg.appendChild(svgEl("text", { x: tx, y: y0 + 16, "text-anchor": "middle" }, count(Math.pow(10, e))));
      }
      pts.forEach(function (p) {
        var cx = x0 + (p.x - lo) / (hi - lo) * (x1 - x0), cy = y0 - p.y * (y0 - y1), text = D.runs[p.i].title;
        var label = svg.appendChild(svgEl("text", { x: 0, y: 0, "class": "point-label", "data-run": p.i }, text));
        var room = Math.floor((W - 8) / CHAR);
        if (text.length > room) label.textContent = text.slice(0, room - 1) + "\u2026";
        /* Right of the dot if it fits, else left of it, else under it; always inside the chart. */
        var width = label.getComputedTextLength() || label.textContent.length * CHAR, left, y = Math.min(Math.max(cy - 7, 12), H - 4);
        if (cx + 8 + width <= W - 4) left = cx + 8;
        else if (cx - 8 - width >= 4) left = cx - 8 - width;
        else { left = Math.max(4, Math.min(W - 4 - width, cx - width / 2)); y = Math.min(cy + 18, H - 4); }
        /* Move a label down (else up) until it overlaps no label already placed. */
        for (var tries = 0; tries < 40 && placed.some(function (b) { return left < b[1] && b[0] < left + width && Math.abs(b[2] - y) < 13; }); tries++) {
          y = tries < 20 ? y + 13 : y - 13;
          if (y > H - 4) y = 12;
        }
        placed.push([left, left + width, y]);
        var dot = svgEl("circle", { cx: cx, cy: cy, r: 5, fill: PALETTE[p.i % PALETTE.length], "class": "point", "data-run": p.i });
        dot.appendChild(svgEl("title", {}, D.runs[p.i].title + ": " + pct(p.y) + "% at " + (axis === "params" ? count(p.raw) + " parameters" : rate(p.raw) + " on " + D.runs[p.i].machine)));
        svg.appendChild(dot);
        label.setAttribute("x", left);
        label.setAttribute("y", y);
        svg.appendChild(label);
      });
    } else {
      svg.appendChild(svgEl("text", { x: x0 + 10, y: 130 }, "no run to plot on this axis"));
    }
    legend(host, pts.map(function (p) { return p.i; }));
    if (missing.length) {
      var list = host.appendChild(el("ul", { "class": "not-plotted" }));
      missing.forEach(function (m) { list.appendChild(el("li", { "data-run": m[0] }, "not plotted: " + D.runs[m[0]].title + " (" + m[1] + ")")); });
    }
  }

  /* ---- models ---- */
  function renderModels() {
    var host = clear(byId("model-cards"));
    D.runs.forEach(function (run, i) {
      var box = host.appendChild(el("div", { "class": "model", id: "model-" + i }));
      box.appendChild(el("h3")).appendChild(runName(i, false));
      var facts = el("ul");
      var w = run.window;
      [["result file", run.file], ["snapshot", run.snapshot], ["spec", run.spec],
       ["release date", run.releaseText || "unknown"],
       ["training cutoff", run.cutoffText || (run.bound ? "not declared; the release date " + run.bound.text + " bounds it" : "unknown")],
       ["run id", run.id],
       ["parameters", run.params === null ? "unknown" : count(run.params)],
       ["embedding dimension", run.embedDim || "unknown"],
       ["open weights", run.openWeights || "unknown"],
       ["licence", run.license || "unknown"],
       ["verification", run.verification ? run.verification.status + (run.verification.note ? " (" + run.verification.note + ")" : "") : "not checked (not from a results repository)"],
       ["evaluated window", w && run.windowText ? run.windowText + " (" + w.kept_queries + " of " + w.total_queries + " queries)" : "every date"],
       ["embedding throughput", run.throughput ? rate(run.throughput) + " on " + run.machine : "not known: " + run.throughputNote],
       ["machine", run.machine]
      ].forEach(function (pair) {
        var li = facts.appendChild(el("li"));
        li.appendChild(el("span", { "class": "fact" }, pair[0] + ": "));
        li.appendChild(document.createTextNode(pair[1]));
      });
      run.flags.forEach(function (f) { facts.appendChild(el("li", { "class": "flag-reason" }, f.mark + " " + f.reason + " (the run's own window)")); });
      box.appendChild(facts);
      var links = box.appendChild(el("p", { "class": "run-links" }));
      links.appendChild(el("span", { "class": "fact" }, "report: "));
      links.appendChild(run.report ? el("a", { href: run.report, "class": "report-link" }, "retrieval report") : document.createTextNode("none linked"));
      if (run.weightsUrl) { links.appendChild(document.createTextNode(" \u00b7 ")); links.appendChild(el("a", { href: run.weightsUrl, rel: "noopener", "class": "weights-link" }, "weights")); }
      else if (run.card && run.card.weights_source) links.appendChild(el("span", { "class": "weights-source" }, " \u00b7 weights: " + run.card.weights_source)); /* not a URL: text */
      var url = run.card && (run.card.url || run.card.card_url || run.card.homepage);
      if (typeof url === "string" && /^https?:\/\//i.test(url)) box.appendChild(el("a", { href: url, rel: "noopener" }, "model card"));
      if (run.card) {
        var details = box.appendChild(el("details"));
        details.appendChild(el("summary", {}, "card as recorded in the result file"));
        details.appendChild(el("pre", {}, JSON.stringify(run.card, null, 2)));
      } else {
        box.appendChild(el("p", { "class": "muted" }, "no model card in the result file"));
      }
    });
  }

  /* ---- page state in the URL ---- */
  function writeHash() {
    var parts = { metric: state.family, k: perK() ? state.k : null, subset: state.subset === "all" ? null : state.subset,
      since: state.since === null ? null : dayText(state.since), until: state.until === null ? null : dayText(state.until),
      sort: state.sort.key === "rank" && state.sort.dir === "asc" ? null : state.sort.key + "." + state.sort.dir,
      bsort: state.bsort.key === "count" && state.bsort.dir === "desc" ? null : state.bsort.key + "." + state.bsort.dir,
      x: state.x === "params" ? null : state.x, base: state.baseline === null ? null : String(state.baseline),
      ds: state.distractors ? "1" : null, rel: state.group ? String(state.group) : null,
      osort: state.osort.key === "rank" && state.osort.dir === "asc" ? null : state.osort.key + "." + state.osort.dir,
      facts: state.facts ? "1" : null, open: state.filter.open ? "1" : null, verified: state.filter.verified ? "1" : null,
      lic: state.filter.license || null };
    var params = new URLSearchParams();
    Object.keys(parts).forEach(function (key) { if (parts[key] !== null) params.set(key, parts[key]); });
    var hash = "#" + params.toString();
    if (location.hash === hash) return;
    try { history.replaceState(null, "", hash); } catch (err) { location.replace(hash); }
  }
  function readHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    var family = params.get("metric"), k = Number(params.get("k")), subset = params.get("subset");
    state.family = D.families.indexOf(family) >= 0 ? family : D.families[0];
    state.k = D.ks.indexOf(k) >= 0 ? k : D.ks[0];
    state.subset = subset && D.scopes.indexOf(subset) >= 0 ? subset : "all";
    var since = parseDay(params.get("since")), until = parseDay(params.get("until"));
    if (since !== null && until !== null && since > until) { since = null; until = null; }
    state.since = since;
    state.until = until;
    state.sort = parseSort(params.get("sort"), BOARD_KEYS, { key: "rank", dir: "asc" });
    state.bsort = parseSort(params.get("bsort"), ["group", "count"].concat(D.runs.map(function (_, i) { return "run-" + i; })), { key: "count", dir: "desc" });
    state.x = params.get("x") === "throughput" ? "throughput" : "params";
    state.distractors = params.get("ds") === "1";
    var rel = params.get("rel");
    state.group = rel !== null && /^\d+$/.test(rel) && Number(rel) < D.groups.length ? Number(rel) : 0;
    state.osort = parseSort(params.get("osort"), ["rank", "model", "diff"].concat(FACT_KEYS, paperColumns().map(function (_, j) { return "c" + j; })), { key: "rank", dir: "asc" });
    state.facts = params.get("facts") === "1";
    var lic = params.get("lic");
    state.filter = { open: params.get("open") === "1", verified: params.get("verified") === "1", license: lic && licences().indexOf(lic) >= 0 ? lic : "" };
    var base = params.get("base");
    state.baseline = base !== null && /^\d+$/.test(base) && Number(base) < D.runs.length ? Number(base) : null;
  }
  function parseSort(text, keys, fallback) {
    var parts = (text || "").split(".");
    return parts.length === 2 && keys.indexOf(parts[0]) >= 0 && (parts[1] === "asc" || parts[1] === "desc")
      ? { key: parts[0], dir: parts[1] } : fallback;
  }

  /* ---- which choices apply ---- */
  /* Why a metric family has no value on the chosen subset for any run (null: it applies). */
  function familyMissing(family) {
    var scopes = state.subset === "all" ? D.scopes : [state.subset];
    var present = D.runs.some(function (run) {
      return scopes.some(function (scope) {
        return Object.keys(run.metrics[scope] || {}).some(function (m) { return m.split("@")[0] === family; });
      });
    });
    if (present) return null;
    var where = state.subset === "all" ? "any subset" : title(state.subset);
    var why = family === "outfit_recall" ? "outfits are street photos' garments (street-look subsets only)"
      : family === "map" || family === "recall" ? "only composed queries and legacy protocols have it"
      : state.subset in COMPOSED || state.subset === "composed_overall" ? "composed queries have no " + info(family).name
      : "no run on the board has it";
    return "not on " + where + ": " + why;
  }
  function fitFamily() {
    if (!familyMissing(state.family)) return "";
    var next = D.families.filter(function (f) { return !familyMissing(f); })[0];
    if (!next) return "";
    var note = info(state.family).name + " does not apply to " + (state.subset === "all" ? "these runs" : title(state.subset)) + ", so " + info(next).name + " is shown.";
    state.family = next;
    return note;
  }
  /* Why no run has the chosen family at cut-off `k` on the chosen subset (null: some run has it). */
  function kMissing(k) {
    if (!perK()) return null;
    var scopes = state.subset === "all" ? D.scopes : [state.subset], cut = {};
    D.runs.forEach(function (run) {
      scopes.forEach(function (scope) {
        Object.keys(run.metrics[scope] || {}).forEach(function (m) {
          var parts = m.split("@");
          if (parts[0] === state.family) cut[parts[1]] = 1;
        });
      });
    });
    if (String(k) in cut) return null;
    var where = state.subset === "all" ? "any subset" : title(state.subset);
    var has = Object.keys(cut).map(Number).sort(function (a, b) { return a - b; });
    return "not on " + where + ": no run there was cut at " + k + (has.length ? " (K = " + has.join(", ") + " only)" : "");
  }
  function fitK() {
    if (!kMissing(state.k)) return "";
    var next = D.ks.filter(function (k) { return !kMissing(k); }).sort(function (a, b) { return Math.abs(a - state.k) - Math.abs(b - state.k) || a - b; })[0];
    if (next === undefined) return "";
    var note = info(state.family).name + "@" + state.k + " is not recorded on " + (state.subset === "all" ? "these runs" : title(state.subset)) + ", so @" + next + " is shown.";
    state.k = next;
    return note;
  }
  function syncKs() {
    Array.prototype.forEach.call(byId("k").options, function (option) {
      var missing = kMissing(Number(option.value));
      option.disabled = !!missing;
      option.textContent = option.value + (missing ? " \u2014 " + missing : "");
      option.title = missing || "";
    });
  }
  function syncFamilies() {
    Array.prototype.forEach.call(byId("family").options, function (option) {
      var missing = familyMissing(option.value);
      option.disabled = !!missing;
      option.textContent = info(option.value).name + (info(option.value).per_k ? "@K" : "@1") + (missing ? " \u2014 " + missing : "");
      option.title = missing || "";
    });
  }

  /* ---- rendering ---- */
  function syncControls() {
    byId("family").value = state.family;
    byId("k").value = String(state.k);
    byId("k").disabled = !perK();
    byId("k-note").textContent = perK() ? "" : "K does not apply: " + info(state.family).name + " is measured at rank 1";
    byId("subset").value = state.subset;
    byId("scatter-x").value = state.x;
    byId("baseline").value = state.baseline === null ? "" : String(state.baseline);
    byId("show-distractors").checked = state.distractors;
    byId("show-facts").checked = state.facts;
    byId("only-open").checked = state.filter.open;
    byId("only-verified").checked = state.filter.verified;
    byId("licence").value = state.filter.license;
    var def = info(state.family).definition.replace(/top K/g, "top " + (perK() ? state.k : 1)).replace(/\bK\b/g, String(state.k));
    byId("metric-definition").textContent = metricTitle(metricName()) + ": " + def + ".";
  }
  function renderAll() {
    byId("metric-note").textContent = [fitFamily(), fitK()].filter(Boolean).join(" ");
    syncFamilies();
    syncKs();
    syncControls();
    renderWindowStatus();
    renderOverview();
    var any = renderTables();
    byId("charts").hidden = !any;
    byId("breakdowns").hidden = !any;
    if (any) {
      renderRecallChart();
      renderBreakdowns();
      renderScatter();
    }
    document.body.setAttribute("data-ready", String(Date.now()));
  }
  function renderAndSave() {
    renderAll();
    writeHash();
  }

  function setup() {
    D.runs.forEach(function (run) {
      var shared = D.queries[run.q.shared];
      Object.keys(shared).forEach(function (name) { run.q[name] = shared[name]; });
      run.q.d.forEach(function (d) {
        if (d === null) return;
        range.min = range.min === null ? d : Math.min(range.min, d);
        range.max = range.max === null ? d : Math.max(range.max, d);
      });
    });
    var family = byId("family"), k = byId("k"), subset = byId("subset");
    D.families.forEach(function (f) { family.appendChild(el("option", { value: f }, info(f).name + (info(f).per_k ? "@K" : "@1"))); });
    D.ks.forEach(function (v) { k.appendChild(el("option", { value: v }, v)); });
    subset.appendChild(el("option", { value: "all" }, "every subset and Overall"));
    D.scopes.forEach(function (s) { subset.appendChild(el("option", { value: s }, title(s))); });
    family.addEventListener("change", function () { state.family = family.value; renderAndSave(); });
    k.addEventListener("change", function () { state.k = Number(k.value); renderAndSave(); });
    subset.addEventListener("change", function () { state.subset = subset.value; renderAndSave(); });
    byId("scatter-x").addEventListener("change", function () { state.x = byId("scatter-x").value; renderScatter(); writeHash(); });
    ["since-range", "until-range"].forEach(function (id) {
      var input = byId(id);
      if (range.min === null) { input.disabled = true; return; }
      input.min = range.min;
      input.max = range.max;
      input.step = 1;
      input.addEventListener("input", function () { sliderChanged(id === "since-range" ? "since" : "until"); });
      input.addEventListener("change", function () {
        var w = sliderChanged(id === "since-range" ? "since" : "until");
        setWindow(w[0], w[1]);
      });
    });
    if (range.min !== null) {
      byId("since").min = byId("until").min = dayText(range.min);
      byId("since").max = byId("until").max = dayText(range.max);
      byId("data-range").textContent = "The runs' queries were first seen from " + dayText(range.min) + " to " + dayText(range.max) + ".";
    }
    var dsBox = byId("show-distractors");
    dsBox.disabled = !distractorsKnown();
    if (dsBox.disabled) byId("distractor-note").textContent = "(no run on the board records it)";
    dsBox.addEventListener("change", function () { state.distractors = dsBox.checked; renderAndSave(); });
    byId("show-facts").addEventListener("change", function () { state.facts = byId("show-facts").checked; renderAndSave(); });
    byId("only-open").addEventListener("change", function () { state.filter.open = byId("only-open").checked; renderAndSave(); });
    byId("only-verified").addEventListener("change", function () { state.filter.verified = byId("only-verified").checked; renderAndSave(); });
    var licence = byId("licence");
    licence.appendChild(el("option", { value: "" }, "any"));
    licences().forEach(function (name) { licence.appendChild(el("option", { value: name }, name)); });
    licence.addEventListener("change", function () { state.filter.license = licence.value; renderAndSave(); });
    var release = byId("release");
    D.groups.forEach(function (g, gi) { release.appendChild(el("option", { value: String(gi) }, g.title + " (" + g.runs.length + (g.runs.length === 1 ? " run)" : " runs)"))); });
    release.addEventListener("change", function () { state.group = Number(release.value); renderAndSave(); });
    var baseline = byId("baseline");
    baseline.appendChild(el("option", { value: "" }, "none"));
    D.runs.forEach(function (run, i) { baseline.appendChild(el("option", { value: String(i) }, rowTitle(i))); });
    baseline.addEventListener("change", function () { state.baseline = baseline.value === "" ? null : Number(baseline.value); renderAndSave(); });
    Array.prototype.forEach.call(document.querySelectorAll("button[data-export]"), function (button) {
      button.addEventListener("click", function () { state.exportFormat = button.getAttribute("data-export"); renderOverview(); });
    });
    byId("apply").addEventListener("click", applyInputs);
    byId("reset").addEventListener("click", function () { setWindow(null, null); });
    var snaps = {};
    D.runs.forEach(function (run) { snaps[run.snapshot] = 1; });
    byId("meta").textContent = D.runs.length + (D.runs.length === 1 ? " run" : " runs") + " on snapshot" + (Object.keys(snaps).length > 1 ? "s " : " ") + Object.keys(snaps).join(", ");
    window.addEventListener("hashchange", function () { readHash(); renderAll(); });
    var resizing = null, lastWidth = window.innerWidth;
    window.addEventListener("resize", function () {
      if (window.innerWidth === lastWidth) return;
      lastWidth = window.innerWidth;
      clearTimeout(resizing);
      resizing = setTimeout(renderAll, 150);
    });
    readHash();
    renderSeries();
    dateStrip();
    renderModels();
    renderAll();
  }
  setup();
})();
