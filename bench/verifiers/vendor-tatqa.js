#!/usr/bin/env node
'use strict';
// Rebuilds the vendored TAT-QA subset the verifier agreement uses:
//   node bench/verifiers/vendor-tatqa.js <TAT-QA checkout>/dataset_raw/tatqa_dataset_dev.json
// TAT-QA (github.com/NExTplusplus/TAT-QA, CC BY 4.0): the first questions of each answer type and
// scale in file order, up to a quota each, text spans of at most 120 characters. Only the
// question, its answer key and scale are kept (the tables and paragraphs are not needed to grade).
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const QUOTAS = [
  ['arithmetic', 'percent', 40], ['arithmetic', 'thousand', 25], ['arithmetic', 'million', 25], ['arithmetic', '', 15],
  ['arithmetic', 'billion', 5], ['count', '', 10], ['span', '', 25], ['span', 'thousand', 10], ['span', 'million', 10],
  ['span', 'percent', 5], ['multi-span', '', 20], ['multi-span', 'thousand', 5], ['multi-span', 'million', 5],
];

const src = process.argv[2];
if (!src) { console.error('usage: vendor-tatqa.js <tatqa_dataset_dev.json>'); process.exit(2); }
const docs = JSON.parse(readFileSync(src, 'utf8'));
const taken = new Map(QUOTAS.map(([t, s]) => [`${t}/${s}`, 0]));
const out = [];
for (const doc of docs) {
  for (const q of doc.questions) {
    const key = `${q.answer_type}/${q.scale}`;
    const quota = QUOTAS.find(([t, s]) => `${t}/${s}` === key);
    if (!quota || taken.get(key) >= quota[2]) continue;
    const spans = Array.isArray(q.answer) ? q.answer.map(String) : [String(q.answer)];
    if (spans.some((s) => s.length > 120 || s.trim() === '')) continue;
    taken.set(key, taken.get(key) + 1);
    out.push({ uid: q.uid, question: q.question, answer: q.answer, answer_type: q.answer_type, scale: q.scale });
  }
}
const dest = join(__dirname, '..', '..', 'plugins', 'task-officeqa', 'src', '__fixtures__', 'tatqa', 'tatqa-dev-subset.json');
writeFileSync(dest, `${JSON.stringify({ source: 'TAT-QA dataset_raw/tatqa_dataset_dev.json at NExTplusplus/TAT-QA 870accc41953dcde885aabeb963d94aabdc0fbc3 (CC BY 4.0); subset, fields uid, question, answer, answer_type, scale', questions: out }, null, 1)}\n`);
console.log(`${out.length} questions -> ${dest}`);
