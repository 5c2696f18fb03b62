'use strict';
// bench:verifiers — the OfficeQA verifier against a public benchmark's own answer keys: 200
// TAT-QA questions (vendored, CC BY 4.0), each gold in the forms models write and in wrong forms
// (near misses, neighbouring years, rounding-level misses, wrong scale or sign, partial or padded
// lists, hedges), made from the key by rules that never consult the matcher. Prints the table
// per form kind, the same with reward.py's README tolerance of 1% beside it, and ends with
//   RESULT verifiers cases=N gold_accept=… wrong_reject=…
// for the default matcher (tolerance 0, as reward.py's own default).
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { agreementTable, matchAnswer } = require('@clawgym/task-officeqa');

const fixture = join(__dirname, '..', '..', 'plugins', 'task-officeqa', 'src', '__fixtures__', 'tatqa', 'tatqa-dev-subset.json');
const { source, questions } = JSON.parse(readFileSync(fixture, 'utf8'));
console.log(`answer keys: ${questions.length} questions of ${source}`);

const t0 = Date.now();
const table = agreementTable(questions);
const ms = Date.now() - t0;
const loose = agreementTable(questions, (a, g) => matchAnswer(a, g, { relativeTolerance: 0.01 }));
const looseRow = new Map(loose.rows.map((r) => [`${r.right}:${r.kind}`, r]));

const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)}%` : '-');
console.log(`\n${'form'.padEnd(48)} ${'cases'.padStart(6)} ${'agree'.padStart(7)} ${'agree@1%'.padStart(9)}`);
for (const right of [true, false]) {
  console.log(right ? '-- right answers (should be accepted)' : '-- wrong answers (should be rejected)');
  for (const r of table.rows.filter((x) => x.right === right)) {
    const l = looseRow.get(`${r.right}:${r.kind}`);
    console.log(`${r.kind.padEnd(48)} ${String(r.cases).padStart(6)} ${pct(r.agreed, r.cases).padStart(7)} ${pct(l ? l.agreed : 0, l ? l.cases : 0).padStart(9)}`);
  }
}
const disagreements = table.cases.filter((c) => c.accepted !== c.right);
console.log(`\n${disagreements.length} disagreement(s):`);
for (const c of disagreements.slice(0, 20)) console.log(`  ${c.right ? 'refused' : 'ACCEPTED'} ${JSON.stringify(c.text)} for gold ${JSON.stringify(c.gold)} (${c.kind}): ${c.reason}`);
console.log(`\nwith reward.py's README tolerance (1%): gold_accept=${loose.goldAccept.toFixed(4)} wrong_reject=${loose.wrongReject.toFixed(4)}`);
console.log(`graded ${table.cases.length} answers in ${ms} ms`);
console.log(`RESULT verifiers cases=${table.cases.length} gold_accept=${table.goldAccept.toFixed(4)} wrong_reject=${table.wrongReject.toFixed(4)}`);
