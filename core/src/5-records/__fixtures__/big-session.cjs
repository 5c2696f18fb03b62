'use strict';
// Child process of big-sessions.test.ts (run against the built core, so that its peak memory is
// the reader's alone): writes a synthetic session file of a given size, or reads one and prints
// what it read and its own peak RSS as one JSON line.
const { openSync, writeSync, closeSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');
const dist = join(__dirname, '..', '..', '..', 'dist');
const { idsBase64, floatsText } = require(join(dist, '5-records', 'record-codec.js'));

const [mode, target, a, b] = process.argv.slice(2);
const head = (callIndex, origin) => JSON.stringify({
  runId: 'big', rolloutId: 'big', callIndex, wireFormat: 'openai-chat', requestedModel: 'm', finishReason: 'stop', origin, policyVersion: 0,
  timings: { receivedAt: 1, finishedAt: 2 },
}).slice(0, -1);
// Ids like a real vocabulary's; the 50th ends the first message (byte-level ChatML's <|im_end|>,
// what `inspect` reads a run without a config with), so that calls share one tree.
const END = 258;
const idsOfCall = (n, salt) => Int32Array.from({ length: n }, (_, i) => (i === 50 ? END : (i * 2654435761 + salt) % 151000 >>> 0));
const OUTPUT = Array.from({ length: 256 }, (_, i) => 151000 + i);
const out = (writeSync, fd, s) => { const buf = Buffer.from(s); for (let at = 0; at < buf.length;) at += writeSync(fd, buf, at); };

function write(file, bytes, line) {
  mkdirSync(join(file, '..'), { recursive: true });
  const fd = openSync(file, 'w');
  let size = 0;
  let calls = 0;
  while (size < bytes) for (const piece of line(calls++)) { out(writeSync, fd, piece); size += Buffer.byteLength(piece); }
  closeSync(fd);
  return { bytes: size, calls };
}

if (mode === 'write-v2') {
  // Format 2: each call extends the previous one by a long tool result (4M new ids).
  const tail = [...idsBase64(idsOfCall(4_000_000, 7))].join('');
  const lp = floatsText(OUTPUT.map(() => -0.25));
  const outText = [...idsBase64(OUTPUT)].join('');
  let prompt = 0;
  const res = write(target, Number(a), function* (i) {
    const origin = i === 0 ? { kind: 'fork', reason: 'first call of the session' } : { kind: 'reuse', parentCall: i - 1, reusedTokens: prompt + OUTPUT.length };
    const ref = i === 0 ? '' : `,"ref":${i - 1},"keep":${prompt + OUTPUT.length}`;
    prompt = i === 0 ? 4_000_000 : prompt + OUTPUT.length + 4_000_000;
    yield `${head(i, origin)},"v":2,"out":"${outText}","lp":"${lp}"${ref},"ids":"`;
    yield tail;
    yield '"}\n';
  });
  console.log(JSON.stringify({ ...res, lastPrompt: prompt }));
} else if (mode === 'write-v1') {
  // The earlier format: every call re-sends the same 4.5M-id history (a harness whose requests
  // never matched the ledger), each with one id of its own at the end: all of it JSON numbers.
  const history = Array.from(idsOfCall(4_500_000, 3)).join(',');
  const res = write(target, Number(a), function* (i) {
    yield `${head(i, { kind: 'fork', reason: 'history rewritten' })},"outputIds":[${OUTPUT.join(',')}],"outputLogprobs":[${OUTPUT.map(() => -0.25).join(',')}],"promptIds":[`;
    yield history;
    yield `,${200000 + i}]}\n`;
  });
  console.log(JSON.stringify({ ...res, lastPrompt: 4_500_001 }));
} else if (mode === 'tree') {
  const { CallStore } = require(join(dist, '5-records', 'call-store.js'));
  const { buildTreeFromStream } = require(join(dist, '7-tree', 'build-stream.js'));
  (async () => {
    const store = new CallStore(target);
    const heads = [];
    let lastPrompt = 0;
    for await (const h of store.heads(a)) { heads.push({ callIndex: h.callIndex, role: h.role, finishReason: h.finishReason }); lastPrompt = h.promptLength; }
    const info = { rolloutId: a, taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1 };
    const tree = await buildTreeFromStream(heads, store.stream(a), info, { messageEndId: END });
    const tokens = tree.nodes.reduce((n, x) => n + x.tokens.length, 0);
    const held = [...new Set(tree.nodes.map((n) => n.tokens.buffer))].reduce((n, x) => n + x.byteLength, 0)
      + tree.nodes.reduce((n, x) => n + (x.logprobs ? x.logprobs.byteLength : 0), 0);
    console.log(JSON.stringify({ calls: tree.calls, nodes: tree.nodes.length, tokens, treeBytes: held, lastPrompt, maxRss: process.resourceUsage().maxRSS * 1024 }));
  })().catch((e) => { console.error(e); process.exit(1); });
} else if (mode === 'inspect') {
  const { main } = require(join(dist, 'cli', 'main.js'));
  (async () => {
    let text = '';
    const io = { out: (s) => { text += s; }, err: (s) => { text += s; }, cwd: target };
    const code = await main(['inspect', target, ...(a ? ['--rollout', a] : [])], io);
    console.log(JSON.stringify({ code, text, maxRss: process.resourceUsage().maxRSS * 1024 }));
  })().catch((e) => { console.error(e); process.exit(1); });
}
