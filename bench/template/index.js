'use strict';
// bench:template — the real-model path: golden byte-equality of the shipped chat templates with
// Python's jinja2, token ids against an independent tokenizer, Qwen3's render cost late vs early
// in a conversation, the proxy's round trip with Qwen3's template and tokenizer against a bare
// node:http server answering the same bytes (same load, same run), and encoding speed against
// the independent implementation (same text, same run).
const { spawn } = require('node:child_process');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const core = require('../../core/dist/index.js');
const { TitoLedger } = core;
const { loadChatModel, loadModelFolder, HfTokenizer } = require('../../plugins/model-hf/dist/index.js');
const { TokenizerLoader } = require('@lenml/tokenizers');
const { callsOf, loopByKind, loadApart, PER_TOKEN, modelDir, NOW, nullEngineProxy, answerBytes, bareServer, HARNESS_TOOLS, SYSTEM, grow, pct, ms, agent } = require('./load.js');

const root = join(__dirname, '..', '..');
const fixtures = join(root, 'core', 'src', 'model', '__fixtures__');
const models = new Map();
const model = (name, kwargs) => {
  const key = `${name}${JSON.stringify(kwargs ?? {})}`;
  if (!models.has(key)) models.set(key, loadChatModel(modelDir(name), { now: NOW, templateKwargs: kwargs }));
  return models.get(key);
};

function goldens() {
  const cases = new Map(JSON.parse(readFileSync(join(fixtures, 'template-cases.json'), 'utf8')).map((c) => [c.name, c]));
  const { goldens: list } = JSON.parse(readFileSync(join(fixtures, 'template-goldens.json'), 'utf8'));
  let match = 0;
  for (const g of list) {
    const c = cases.get(g.case);
    let text;
    let error;
    try { text = model(g.family, c.kwargs).chatTemplate.renderMessages(c.messages, c.tools, c.addGenerationPrompt).text; } catch (e) { error = e.message; }
    if (g.error !== undefined ? error !== undefined && error.includes(g.error) : text === g.text) match++;
    else console.log(`  golden mismatch: ${g.case} / ${g.family}`);
  }
  return { cases: list.length, match, texts: list.filter((g) => g.text).map((g) => [g.family, g.text]) };
}

function tokenizers(texts) {
  const corpus = [
    'function fib(n) {\n  return n < 2 ? n : fib(n - 1) + fib(n - 2);\n}\n\t// tabs\r\n',
    '你好，世界！日本語のテキスト。한국어 문장.', '🙂🚀👩‍👩‍👧‍👦🇯🇵 — “quotes” naïve café', ' '.repeat(300) + '\n'.repeat(50) + 'x',
    '<|im_end|> <tool_call>{"name": "x"}</tool_call> <think> <|eot_id|> <start_of_turn> <｜tool▁sep｜> <|im_end',
  ];
  let mismatches = 0;
  let compared = 0;
  for (const name of ['qwen3', 'deepseek_v3', 'llama3_1', 'gemma3', 'gptoss']) {
    const f = loadModelFolder(modelDir(name));
    const ours = new HfTokenizer(f.tokenizerJson, f.tokenizerConfig, f.chatTemplate ?? '');
    const ref = TokenizerLoader.fromPreTrained({ tokenizerJSON: f.tokenizerJson, tokenizerConfig: f.tokenizerConfig });
    const own = texts.filter(([family]) => family === name).map(([, t]) => t);
    for (const text of [...corpus, ...own]) {
      const a = ours.encodeMarkup(text);
      const b = ref.encode(text, { add_special_tokens: false });
      compared++;
      if (a.length !== b.length || a.some((id, i) => id !== b[i])) { mismatches++; console.log(`  tokenizer mismatch: ${name} on ${JSON.stringify(text.slice(0, 40))}`); }
    }
  }
  // Encoding speed: the same harness text (Qwen3 renders of the four CLIs' requests), both implementations, interleaved.
  const f = loadModelFolder(modelDir('qwen3'));
  const ours = new HfTokenizer(f.tokenizerJson, f.tokenizerConfig, f.chatTemplate);
  const ref = TokenizerLoader.fromPreTrained({ tokenizerJSON: f.tokenizerJson, tokenizerConfig: f.tokenizerConfig });
  const text = texts.filter(([family]) => family === 'qwen3').map(([, t]) => t).join('\n');
  const speed = { ours: [], ref: [] };
  for (let round = 0; round < 4; round++) {
    let t0 = process.hrtime.bigint();
    const n = ours.encodeMarkup(text).length;
    speed.ours.push(n / (ms(t0) / 1000));
    t0 = process.hrtime.bigint();
    const m = ref.encode(text, { add_special_tokens: false }).length;
    speed.ref.push(m / (ms(t0) / 1000));
  }
  // Our tokenizer remembers the ids of each pre-token piece: rounds after the first re-encode
  // text it has seen. The first round of a fresh tokenizer is the figure for new text.
  return { compared, mismatches, encode: pct(speed.ours.slice(1), 0.5), cold: speed.ours[0], reference: pct(speed.ref.slice(1), 0.5), tokens: ours.encodeMarkup(text).length };
}

/** ledger.prepare with Qwen3's template at each turn of one harness-shaped conversation (tool loop). */
function renderCost(turns, sessions) {
  const { chatTemplate } = model('qwen3');
  const perTurn = Array.from({ length: turns }, () => []);
  const tools = HARNESS_TOOLS.map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters ?? {} }));
  for (let s = 0; s < sessions; s++) {
    const ledger = new TitoLedger(chatTemplate);
    const messages = [{ role: 'system', parts: [{ type: 'text', text: SYSTEM }] }, { role: 'user', parts: [{ type: 'text', text: `Task ${s}: create the report.` }] }];
    for (let turn = 1; turn <= turns; turn++) {
      const conv = JSON.parse(JSON.stringify({ messages, tools }));
      const t0 = process.hrtime.bigint();
      const prepared = ledger.prepare(conv);
      perTurn[turn - 1].push(ms(t0));
      const reply = { role: 'assistant', parts: [{ type: 'thinking', text: `Step ${turn}: look at dir${turn}.` }, { type: 'tool_call', id: `c${turn}`, name: 'exec', arguments: JSON.stringify({ command: `ls -la dir${turn}` }) }] };
      prepared.commit({ callIndex: turn - 1, outputIds: chatTemplate.renderReply(reply.parts), finishReason: 'stop', reply });
      messages.push(reply, { role: 'tool', parts: [{ type: 'tool_result', callId: `c${turn}`, content: `total 8\n${`-rw-r--r-- 1 root root 120 file${turn}.txt\n`.repeat(8)}` }] });
    }
  }
  return perTurn.map((xs) => pct(xs, 0.5));
}

/**
 * The proxy's round trips against the bare server's, in one open loop: the proxy's sessions and
 * the bare server's alternate (`sessions` each), `rate` calls/s in all, so a call comes 1/rate
 * after the one before whichever server it is for, as in the phases this replaced. Each call of
 * one has a call of the other beside it in time, so the machine's drift hits both alike. In
 * phases (4 s of one, then 4 s of the other) the ratio read 1.33–1.59 in five fresh runs of the
 * same build; alternating per call, 1.48–1.53, with the same mean (docs/templates.md).
 */
async function roundTrips(sessions, rate, seconds, clientApart) {
  const proxy = await nullEngineProxy(core, model('qwen3'));
  const { server: bare, url: bareUrl } = await bareServer(await answerBytes(proxy));
  // `sessions` conversations each way, grown 8 calls deep before measuring (their first calls render in full).
  const endpoints = Array.from({ length: 2 * sessions }, (_, i) => {
    const kind = i % 2 ? 'proxy' : 'bare';
    const id = `${kind === 'proxy' ? 'p' : 'b'}-${i >> 1}`;
    return { kind, id, ...(kind === 'proxy' ? proxy.openSession(id) : { baseUrl: `${bareUrl}/s/${id}`, apiKey: 'k' }) };
  });
  let latencies;
  if (clientApart) latencies = await loadApart(endpoints, { rate, seconds, turns: 8 });
  else {
    const calls = callsOf(endpoints);
    await grow(calls.map((c) => c.call), 8);
    latencies = await loopByKind(calls, rate, seconds);
  }
  const records = (await Promise.all(proxy.sessions.all().filter((s) => s.rolloutId.startsWith('p-')).map((s) => proxy.records(s.rolloutId)))).flat();
  await proxy.stop();
  await new Promise((r) => { bare.closeAllConnections(); bare.close(r); });
  const { proxy: p, bare: b } = latencies;
  return { proxyP50: pct(p, 0.5), bareP50: pct(b, 0.5), proxyP99: pct(p, 0.99), bareP99: pct(b, 0.99), n: p.length, records };
}

/**
 * The round trips' servers, in a process of their own unless `--in-process`: a proxy process
 * serves one model, while this one has by then rendered the goldens of four other templates and
 * encoded with five tokenizers through the same code, which leaves its JIT type feedback and heap
 * unlike any proxy's (in this process after those phases the ratio reads about 0.1 higher,
 * docs/templates.md). `clientApart`: the client is a process of its own too (load.js `loadApart`),
 * as every harness is; otherwise it shares the servers' thread, as it did before 2026-12-05.
 */
function roundTripsApart(sessions, rate, seconds, clientApart) {
  if (process.argv.includes('--in-process')) return roundTrips(sessions, rate, seconds, clientApart).then((rt) => ({ ...rt, apart: false }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [__filename, '--round-trips', String(sessions), String(rate), String(seconds), clientApart ? '1' : '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve({ ...JSON.parse(out), apart: true }) : reject(new Error(`the round-trip process exited with ${code}`))));
  });
}

async function main() {
  if (process.argv[2] === '--round-trips') {
    const [sessions, rate, seconds, clientApart] = process.argv.slice(3).map(Number);
    const rt = await roundTrips(sessions, rate, seconds, clientApart === 1);
    process.stdout.write(JSON.stringify({ ...rt, records: rt.records.map((r) => ({ drift: r.drift })) }));
    agent.destroy();
    return;
  }
  const g = goldens();
  console.log(`goldens: ${g.match}/${g.cases} byte-equal to Python's jinja2 (scripts/template-goldens.py)`);
  const t = tokenizers(g.texts);
  console.log(`tokenizer: ${t.mismatches} mismatches against @lenml/tokenizers on ${t.compared} texts of 5 models; encoding ${t.tokens} tokens: ours ${t.encode.toFixed(0)} tok/s (fresh tokenizer, first pass: ${t.cold.toFixed(0)} tok/s), reference ${t.reference.toFixed(0)} tok/s`);
  renderCost(50, 3); // warm-up
  const costs = renderCost(50, 20);
  console.log(`Qwen3 TITO render cost (ledger.prepare, OpenClaw's system prompt and ${HARNESS_TOOLS.length} tools): turn 1 (full render) ${costs[0].toFixed(2)} ms, turn 2 ${costs[1].toFixed(2)} ms, turn 50 ${costs[49].toFixed(2)} ms, slowest turn ${Math.max(...costs).toFixed(2)} ms`);
  const RATE = 50; // calls/s in all: below the proxy's capacity here, so p50 shows per-call cost, not a queue
  // The figure: the client in a process of its own, as every harness is. Then, for comparison
  // with the figures before 2026-12-05, the same load from a client on the servers' own thread.
  const rt = await roundTripsApart(256, RATE, 32, true);
  const shared = await roundTripsApart(256, RATE, 32, false);
  const drift = rt.records.reduce((m, r) => { m[r.drift?.class ?? 'none'] = (m[r.drift?.class ?? 'none'] ?? 0) + 1; return m; }, {});
  const where = rt.apart ? 'the servers in a process of their own' : 'the servers in this process, after the phases above';
  console.log(`round trip (${where}, the client in another, as a harness is; the null engine's reply ${PER_TOKEN ? 'one token a step, BENCH_PER_TOKEN=1' : 'in one step'}), 256 sessions each way alternating in one open loop, ${RATE} calls/s in all: proxy p50 ${rt.proxyP50.toFixed(2)} ms (p99 ${rt.proxyP99.toFixed(2)}), bare node:http p50 ${rt.bareP50.toFixed(2)} ms (p99 ${rt.bareP99.toFixed(2)}); ${rt.n} proxy calls, drift ${JSON.stringify(drift)}`);
  console.log(`round trip with the client on the servers' thread (as measured before 2026-12-05): proxy p50 ${shared.proxyP50.toFixed(2)} ms, bare ${shared.bareP50.toFixed(2)} ms, ratio ${(shared.proxyP50 / shared.bareP50).toFixed(2)}`);
  console.log(`RESULT template golden_cases=${g.cases} golden_match=${g.match} tokenizer_mismatches=${t.mismatches} render_ratio_50_vs_1=${(costs[49] / costs[0]).toFixed(2)} p50_ratio_vs_bare_http=${(rt.proxyP50 / rt.bareP50).toFixed(2)} p50_added_us=${((rt.proxyP50 - rt.bareP50) * 1000).toFixed(0)} bare_p50_ms=${rt.bareP50.toFixed(2)} p50_ratio_client_on_server_thread=${(shared.proxyP50 / shared.bareP50).toFixed(2)} encode_tok_per_s=${t.encode.toFixed(0)} encode_first_pass_tok_per_s=${t.cold.toFixed(0)} reference_encode_tok_per_s=${t.reference.toFixed(0)}`);
  agent.destroy();
}

main().catch((err) => { console.error(err); process.exit(1); });
