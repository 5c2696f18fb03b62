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

/**
 * Pass or fail of each task at one evaluation (one sample per task; infrastructure failures
 * left out): Map taskId -> 0 | 1, for comparisons paired by task.
 */
function outcomesByTask(evalFile) {
  const rollouts = JSON.parse(readFileSync(evalFile, 'utf8')).rollouts.filter((r) => r.outcome !== 'infra-error');
  return new Map(rollouts.map((r) => [r.taskId, r.pass ? 1 : 0]));
}

/**
 * mean(a) − mean(b) over the tasks both have (each side a Map taskId -> outcome, or a list of
 * such Maps averaged per task), with the standard error of a paired difference: sd(a_i − b_i)/√n.
 * Evaluations on the same held-out tasks share each task's difficulty, which this leaves out of
 * the error; two independent estimates' errors (diff) would count it twice.
 */
function pairedDiff(a, b) {
  const side = (x) => (Array.isArray(x) ? x : [x]);
  const value = (xs, id) => xs.reduce((s, m) => s + m.get(id), 0) / xs.length;
  const as = side(a);
  const bs = side(b);
  const ids = [...as[0].keys()].filter((id) => [...as, ...bs].every((m) => m.has(id)));
  const d = ids.map((id) => value(as, id) - value(bs, id));
  const n = d.length;
  const mean = d.reduce((s, x) => s + x, 0) / n;
  const variance = d.reduce((s, x) => s + (x - mean) ** 2, 0) / Math.max(1, n - 1);
  return { d: mean, se: Math.sqrt(variance / n), n };
}

module.exports = { pass1, estimate, pool, diff, outcomesByTask, pairedDiff };
