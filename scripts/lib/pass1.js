'use strict';
// Held-out Pass@1 read from an evaluation's eval.json, with its standard error. Pass@1 is a mean
// of Bernoulli outcomes, so its standard error is sqrt(p(1-p)/n); a difference's is the two
// combined. Used by bench:learning and scripts/findings.js.
const { existsSync, readFileSync } = require('node:fs');

/** Pass@1 at one evaluation, through one harness or (no harness) all of them: { p, n, se, passes }. */
function pass1(evalFile, harness) {
  if (!existsSync(evalFile)) return undefined;
  const rows = JSON.parse(readFileSync(evalFile, 'utf8')).rows.filter((r) => r.category === 'all' && (harness === undefined || r.harness === harness));
  if (rows.length === 0) return undefined;
  const n = rows.reduce((s, r) => s + r.samples, 0);
  const passes = rows.reduce((s, r) => s + r.pass1 * r.samples, 0);
  return estimate(passes, n);
}

/** Pass@1 of `passes` successes in `n` samples. */
function estimate(passes, n) {
  const p = passes / n;
  return { p, n, passes, se: Math.sqrt((p * (1 - p)) / n) };
}

/** Several evaluations of one policy pooled into one estimate. */
const pool = (xs) => estimate(xs.reduce((s, x) => s + x.passes, 0), xs.reduce((s, x) => s + x.n, 0));

/** a − b, with the standard error of the difference of two independent estimates. */
const diff = (a, b) => ({ d: a.p - b.p, se: Math.sqrt(a.se ** 2 + b.se ** 2) });

module.exports = { pass1, estimate, pool, diff };
