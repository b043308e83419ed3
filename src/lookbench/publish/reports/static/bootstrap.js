/* Python's bootstrap, digit for digit: numpy's SeedSequence + PCG64 (default_rng), Generator.multinomial with equal
   probabilities, np.quantile (linear) and the resampling of lookbench.metrics (clusters drawn within each subset,
   seeded by [seed, crc32(subset)]; paired tests by [seed, crc32(scope), clusters]). */
(function (root) {
  "use strict";
  /* ---- numpy.random.SeedSequence(entropy).generate_state(4, uint64) as 8 little-endian uint32 words ---- */
  function hashmix(value, hc) {
    value = (value ^ hc[0]) >>> 0;
    hc[0] = Math.imul(hc[0], 0x931e8875) >>> 0;
    value = Math.imul(value, hc[0]) >>> 0;
    return (value ^ (value >>> 16)) >>> 0;
  }
  function mix(x, y) {
    var r = (Math.imul(0xca01f9dd, x) - Math.imul(0x4973f715, y)) >>> 0;
    return (r ^ (r >>> 16)) >>> 0;
  }
  /* entropy: integers below 2**32, as numpy coerces a list of small ints (0 is one word) */
  function seedWords(entropy) {
    var pool = [0, 0, 0, 0], hc = [0x43b0d7e5], i, j;
    for (i = 0; i < 4; i++) pool[i] = hashmix(i < entropy.length ? entropy[i] >>> 0 : 0, hc);
    for (i = 0; i < 4; i++) for (j = 0; j < 4; j++) if (i !== j) pool[j] = mix(pool[j], hashmix(pool[i], hc));
    for (i = 4; i < entropy.length; i++) for (j = 0; j < 4; j++) pool[j] = mix(pool[j], hashmix(entropy[i] >>> 0, hc));
    var out = [], hb = 0x8b51f9dd;
    for (i = 0; i < 8; i++) {
      var v = (pool[i % 4] ^ hb) >>> 0;
      hb = Math.imul(hb, 0x58f38ded) >>> 0;
      v = Math.imul(v, hb) >>> 0;
      out.push((v ^ (v >>> 16)) >>> 0);
    }
    return out;
  }

  /* ---- PCG64 (XSL-RR 128/64) on eight 16-bit limbs, least significant first ---- */
  /* four uint32 words, least significant first -> 8 limbs */
  function limbs(w) {
    var out = new Array(8);
    for (var i = 0; i < 4; i++) { out[2 * i] = w[i] & 0xffff; out[2 * i + 1] = w[i] >>> 16; }
    return out;
  }
  /* 0x2360ED051FC65DA4_4385DF649FCCF645 */
  var MULT = limbs([0x9fccf645, 0x4385df64, 0x1fc65da4, 0x2360ed05]);
  /* out = a * b + c mod 2**128 (out may be a) */
  function mulAdd(a, b, c, out, tmp) {
    var carry = 0;
    for (var k = 0; k < 8; k++) {
      var acc = carry + c[k];
      for (var i = 0; i <= k; i++) acc += a[i] * b[k - i];
      carry = Math.floor(acc / 65536);
      tmp[k] = acc - carry * 65536;
    }
    for (k = 0; k < 8; k++) out[k] = tmp[k];
  }
  function pcg64(entropy) {
    var w = seedWords(entropy);
    /* generate_state(4, uint64): u64[k] = w[2k] | w[2k+1] << 32; initstate = u64[0] << 64 | u64[1] */
    var initstate = limbs([w[2], w[3], w[0], w[1]]), initseq = limbs([w[6], w[7], w[4], w[5]]);
    var inc = new Float64Array(8), carry = 1, state = new Float64Array(8), tmp = new Float64Array(8), k;
    for (k = 0; k < 8; k++) { var v = initseq[k] * 2 + carry; inc[k] = v & 0xffff; carry = v >>> 16; }
    mulAdd(state, MULT, inc, state, tmp);
    carry = 0;
    for (k = 0; k < 8; k++) { var s2 = state[k] + initstate[k] + carry; state[k] = s2 & 0xffff; carry = s2 >>> 16; }
    mulAdd(state, MULT, inc, state, tmp);
    return function next() {
      mulAdd(state, MULT, inc, state, tmp);
      var hiHi = (state[7] << 16 | state[6]) >>> 0, hiLo = (state[5] << 16 | state[4]) >>> 0;
      var loHi = (state[3] << 16 | state[2]) >>> 0, loLo = (state[1] << 16 | state[0]) >>> 0;
      var xHi = (hiHi ^ loHi) >>> 0, xLo = (hiLo ^ loLo) >>> 0, rot = state[7] >>> 10, rHi, rLo;
      if (rot === 0) { rHi = xHi; rLo = xLo; }
      else if (rot < 32) { rHi = ((xHi >>> rot) | (xLo << (32 - rot))) >>> 0; rLo = ((xLo >>> rot) | (xHi << (32 - rot))) >>> 0; }
      else if (rot === 32) { rHi = xLo; rLo = xHi; }
      else { var r = rot - 32; rHi = ((xLo >>> r) | (xHi << (32 - r))) >>> 0; rLo = ((xHi >>> r) | (xLo << (32 - r))) >>> 0; }
      /* next_double: the top 53 bits / 2**53 */
      return (rHi * 2097152 + (rLo >>> 11)) / 9007199254740992;
    };
  }

  /* ---- Generator.binomial (inversion branch) and Generator.multinomial ---- */
  function inversion(rand, n, p) {
    var q = 1.0 - p, qn = Math.exp(n * Math.log(q)), np = n * p;
    var bound = Math.min(n, Math.trunc(np + 10.0 * Math.sqrt(np * q + 1)));
    var x = 0, px = qn, u = rand();
    while (u > px) {
      x++;
      if (x > bound) { x = 0; px = qn; u = rand(); } else { u -= px; px = ((n - x + 1) * p * px) / (x * q); }
    }
    return x;
  }
  function binomial(rand, p, n) {
    if (n === 0 || p === 0) return 0;
    var small = p <= 0.5 ? p : 1.0 - p;
    /* numpy switches to BTPE above n*p = 30: equal-probability draws never get there (n*p is about 1) */
    if (small * n > 30.0) throw new Error("binomial draw outside the ported (inversion) range");
    return p <= 0.5 ? inversion(rand, n, p) : n - inversion(rand, n, small);
  }
  /* rng.multinomial(C, [1/C] * C, size=B): B rows of how often each of C clusters is drawn */
  function resampleCounts(entropy, clusters, resamples) {
    var rand = pcg64(entropy), out = [], pj = 1.0 / clusters;
    for (var b = 0; b < resamples; b++) {
      var row = new Float64Array(clusters), remaining = 1.0, dn = clusters;
      for (var j = 0; j < clusters - 1; j++) {
        row[j] = binomial(rand, pj / remaining, dn);
        dn -= row[j];
        if (dn <= 0) break;
        remaining -= pj;
      }
      if (dn > 0 && clusters > 0) row[clusters - 1] = dn;
      out.push(row);
    }
    return out;
  }
  var countCache = {};
  function cachedCounts(entropy, clusters, resamples) {
    var key = entropy.join(",") + "|" + clusters + "|" + resamples;
    if (!(key in countCache)) countCache[key] = resampleCounts(entropy, clusters, resamples);
    return countCache[key];
  }

  /* ---- zlib.crc32 of a string's UTF-8 bytes ---- */
  var CRC = (function () {
    var t = [];
    for (var n = 0; n < 256; n++) { var c = n; for (var k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; t.push(c >>> 0); }
    return t;
  })();
  function crc32(text) {
    var bytes = unescape(encodeURIComponent(text)), c = 0xffffffff;
    for (var i = 0; i < bytes.length; i++) c = CRC[(c ^ bytes.charCodeAt(i)) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  }

  /* ---- np.quantile(sorted values, q), method "linear" ---- */
  function quantile(sorted, q) {
    var n = sorted.length, virtual = (n - 1) * q, previous = Math.min(Math.max(Math.floor(virtual), 0), n - 1);
    var next = Math.min(previous + 1, n - 1), gamma = virtual - previous, a = sorted[previous], b = sorted[next], diff = b - a;
    return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
  }
  /* lookbench.metrics.bootstrap.percentile_interval: no replicates (0 resamples) gives the point itself */
  function interval(replicates, confidence, point) {
    if (!replicates.length) return [point, point];
    var sorted = Array.prototype.slice.call(replicates).sort(function (x, y) { return x - y; });
    var alpha = (1.0 - confidence) / 2.0;
    return [quantile(sorted, alpha), quantile(sorted, 1.0 - alpha)];
  }
  /* counts @ sums: (B,) totals */
  function totals(counts, sums) {
    var out = new Float64Array(counts.length);
    for (var b = 0; b < counts.length; b++) {
      var row = counts[b], t = 0;
      for (var j = 0; j < sums.length; j++) t += row[j] * sums[j];
      out[b] = t;
    }
    return out;
  }
  /* Dense cluster ids as np.unique(..., return_inverse=True) gives them: by sorted distinct key. */
  function dense(keys, numeric) {
    var distinct = Object.keys(keys.reduce(function (all, k) { all[k] = 1; return all; }, {}));
    distinct.sort(numeric ? function (a, b) { return Number(a) - Number(b); } : function (a, b) { return a < b ? -1 : a > b ? 1 : 0; });
    var index = {};
    distinct.forEach(function (k, i) { index[k] = i; });
    return { ids: keys.map(function (k) { return index[k]; }), n: distinct.length };
  }
  function clusterSums(values, ids, n) {
    var sums = new Float64Array(n), sizes = new Float64Array(n);
    for (var i = 0; i < values.length; i++) { sums[ids[i]] += values[i]; sizes[ids[i]] += 1; }
    return { sums: sums, sizes: sizes };
  }

  /* lookbench.metrics.aggregate.summarise for one metric. parts: [{name, values, clusters (raw ids)}] in canonical
     subset order; returns {subset name: [lo, hi], overall: [lo, hi]} (overall when `overall` is true). */
  function summarise(parts, boot, overall) {
    var out = {}, totalSums = new Float64Array(boot.resamples), totalSizes = new Float64Array(boot.resamples);
    parts.forEach(function (part) {
      var d = dense(part.clusters, true), cs = clusterSums(part.values, d.ids, d.n);
      var counts = cachedCounts([boot.seed, crc32(part.name)], d.n, boot.resamples);
      var t = totals(counts, cs.sums), s = totals(counts, cs.sizes), reps = new Float64Array(boot.resamples);
      for (var b = 0; b < reps.length; b++) { totalSums[b] += t[b]; totalSizes[b] += s[b]; reps[b] = t[b] / Math.max(s[b], 1); }
      out[part.name] = interval(reps, boot.confidence, mean(part.values));
    });
    if (overall && parts.length) {
      var reps = new Float64Array(boot.resamples);
      for (var b = 0; b < reps.length; b++) reps[b] = totalSums[b] / Math.max(totalSizes[b], 1);
      out.overall = interval(reps, boot.confidence, mean([].concat.apply([], parts.map(function (p) { return Array.from(p.values); }))));
    }
    return out;
  }
  function mean(values) {
    var sum = 0;
    for (var i = 0; i < values.length; i++) sum += values[i];
    return sum / values.length;
  }
  /* Outfit Recall@1's intervals: one value per outfit (cluster), resampled with its subset's draws. */
  function summariseOutfits(parts, boot) {
    var out = {}, all = new Float64Array(boot.resamples), n = 0;
    parts.forEach(function (part) {
      var counts = cachedCounts([boot.seed, crc32(part.name)], part.values.length, boot.resamples);
      var t = totals(counts, part.values), reps = new Float64Array(boot.resamples);
      for (var b = 0; b < reps.length; b++) { all[b] += t[b]; reps[b] = t[b] / Math.max(part.values.length, 1); }
      n += part.values.length;
      out[part.name] = interval(reps, boot.confidence, mean(part.values));
    });
    if (parts.length) {
      var reps = new Float64Array(boot.resamples);
      for (var b = 0; b < reps.length; b++) reps[b] = all[b] / n;
      out.overall = interval(reps, boot.confidence, mean([].concat.apply([], parts.map(function (p) { return Array.from(p.values); }))));
    }
    return out;
  }
  /* A paired test A - B on paired per-unit differences with string cluster keys, drawn from `entropy`:
     {diff, lo, hi, p}, p = 2 * min(P(<= 0), P(>= 0)) capped at 1 (lookbench.publish.reports.tiestats). */
  function paired(diffs, clusterKeys, entropyOf, resamples, confidence) {
    var d = dense(clusterKeys, false), cs = clusterSums(diffs, d.ids, d.n);
    var counts = cachedCounts(entropyOf(d.n), d.n, resamples);
    var t = totals(counts, cs.sums), s = totals(counts, cs.sizes), reps = new Float64Array(resamples), le = 0, ge = 0;
    for (var b = 0; b < resamples; b++) {
      reps[b] = t[b] / Math.max(s[b], 1);
      if (reps[b] <= 0) le++;
      if (reps[b] >= 0) ge++;
    }
    var sum = 0;
    for (var i = 0; i < diffs.length; i++) sum += diffs[i];
    var ci = interval(reps, confidence, sum / diffs.length);
    return { diff: sum / diffs.length, lo: ci[0], hi: ci[1], p: Math.min(1, 2 * Math.min(le / resamples, ge / resamples)) };
  }
  var api = { seedWords: seedWords, pcg64: pcg64, resampleCounts: resampleCounts, crc32: crc32, quantile: quantile,
    interval: interval, summarise: summarise, summariseOutfits: summariseOutfits, paired: paired };
  if (typeof module !== "undefined" && module.exports) module.exports = api; else root.lookbenchBootstrap = api;
})(this);
