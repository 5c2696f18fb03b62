'use strict';
// bench:faults — the reliability suite, bounded: what a careless or hostile user does to the
// proxy, the rollout loop, the sandboxes and the run directory, counted over every case.
//
//   crashes         a server or run that died or hung when it should not have (or a resume that failed)
//   server_errors   5xx answers to client mistakes (and to valid requests: the engine here is healthy)
//   lost_records    calls whose complete response reached the client but not the records
//                   (and call files that lost lines or mixed two servers' / attempts' calls)
//   misclassified   rollouts with the wrong outcome, client mistakes answered with the wrong status
//   escapes         escape attempts from a sandbox that got through (bubblewrap local sandbox;
//                   the unisolated fallback must be refused)
//   gc_live_removed things of a live run (or of another project) that `clawgym gc` removed
//   lock_violations two processes that both wrote one run folder (or a refusal that did not come)
//   hangs           a process still running 10 s after its run folder failed (or its stop was asked)
//   unrecorded_answers calls answered as a success whose record could not be written
//   orphans         children of the Node < 22 launcher still running after it died or stopped
//   disk_escapes    writes past a sandbox's disk limit that succeeded or reached the host's disk,
//                   and mounts left after the sandbox was destroyed
//
// Everything runs against the built packages: `clawgym serve` and `clawgym run` as real child
// processes (so kill -9 is real), the RolloutRunner with real harness processes in sandboxes.
const http = require('node:http');
const net = require('node:net');
const { spawn, spawnSync } = require('node:child_process');
const { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const core = require('../../core/dist/index.js');
const { startScriptedProxy, openEscapeLab, ESCAPES } = require('../../core/dist/testing/index.js');

const repo = resolve(__dirname, '..', '..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');
const totals = { cases: 0, crashes: 0, server_errors: 0, lost_records: 0, misclassified: 0, escapes: 0, gc_live_removed: 0, lock_violations: 0, hangs: 0, unrecorded_answers: 0, orphans: 0, disk_escapes: 0 };
const made = [];

/** The proxy on a Unix socket in a temp folder of its own (removed at the end with the rest). */
async function listenInTemp(proxy) {
  const sockDir = mkdtempSync(join(tmpdir(), 'bench-faults-sock-'));
  made.push(sockDir);
  const socketPath = join(sockDir, 'proxy.sock');
  await proxy.listenUnix(socketPath);
  return socketPath;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (s) => process.stdout.write(`${s}\n`);

function project(config) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-faults-'));
  made.push(dir);
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"name":"bench-faults","private":true}');
  writeFileSync(join(dir, 'clawgym.config.mjs'), `export default ${config};\n`);
  return dir;
}

/** Count one case; `bad` names what went wrong under which counter (nothing: it passed). */
function tally(name, bad = {}) {
  totals.cases++;
  const wrong = Object.entries(bad).filter(([, n]) => n > 0);
  for (const [k, n] of wrong) totals[k] += n;
  if (wrong.length) log(`  FAIL ${name}: ${wrong.map(([k, n]) => `${k}+${n}`).join(' ')}`);
}

// ------------------------------------------------------------------------------------------
// a `clawgym serve` child

async function startServe(dir, name, sessions) {
  const child = spawn(process.execPath, [bin, 'serve', '--engine', 'scripted', '--port', '0', '--sessions', String(sessions), '--name', name], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
  await Promise.race([
    new Promise((ok) => { const t = setInterval(() => { if (out.includes('Press Ctrl-C')) { clearInterval(t); ok(); } }, 20); }),
    exited.then(() => { throw new Error(`serve exited at start: ${out}`); }),
    sleep(30_000).then(() => { throw new Error('serve did not start in 30 s'); }),
  ]);
  const list = [...out.matchAll(/ANTHROPIC_BASE_URL=(\S+) ANTHROPIC_API_KEY=(\S+)/g)].map((m) => ({ base: m[1], key: m[2], id: m[1].split('/').pop() }));
  const root = /proxy on (http:\/\/\S+)/.exec(out)[1];
  return { child, sessions: list, root, exited, alive: () => child.exitCode === null && child.signalCode === null, runDir: join(dir, 'runs', name) };
}

const agent = new http.Agent({ keepAlive: false });
/** One request: status, body text, and whether the response completed (stream: its final event). */
function request(url, { key, body, headers = {}, method = 'POST' } = {}) {
  return new Promise((done) => {
    const req = http.request(url, { method, agent, headers: { ...(key ? { authorization: `Bearer ${key}`, 'x-api-key': key } : {}), 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
      res.on('error', () => done({ status: res.statusCode, text: Buffer.concat(chunks).toString(), broken: true }));
    });
    req.on('error', (e) => done({ status: 0, text: String(e), broken: true }));
    req.setTimeout(120_000, () => req.destroy(new Error('timeout')));
    req.end(body);
  });
}

const FORMATS = {
  anthropic: { path: '/v1/messages', body: (x = {}) => ({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...x }), done: (t) => t.includes('event: message_stop') || t.includes('"type":"message"') },
  chat: { path: '/v1/chat/completions', body: (x = {}) => ({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...x }), done: (t) => t.includes('data: [DONE]') || t.includes('"object":"chat.completion"') },
  responses: { path: '/v1/responses', body: (x = {}) => ({ model: 'm', max_output_tokens: 64, input: 'hi', ...x }), done: (t) => t.includes('response.completed') || t.includes('"status":"completed"') },
};
const toolResult = {
  anthropic: (content) => ({ messages: [{ role: 'user', content: 'read' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] }] }),
  chat: (content) => ({ messages: [{ role: 'user', content: 'read' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1', content }] }),
  responses: (content) => ({ input: [{ role: 'user', content: 'read' }, { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: content }] }),
};
const badRole = {
  anthropic: { messages: [{ role: 'robot', content: 'x' }] }, chat: { messages: [{ role: 'robot', content: 'x' }] }, responses: { input: [{ role: 'robot', content: 'x' }] },
};
const maxName = { anthropic: 'max_tokens', chat: 'max_tokens', responses: 'max_output_tokens' };
const deep = (n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

/** Records of a session whose response completed (neither aborted nor failed). */
function completedRecords(runDir, id) {
  const file = join(runDir, 'calls', `${id}.jsonl`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).flatMap((l) => { try { return [JSON.parse(l)]; } catch { return []; } });
}

async function proxyCases() {
  log('proxy: client mistakes, large bodies, disconnects, slowloris on every wire format (clawgym serve)');
  const dir = project(`{ run: { outDir: ${JSON.stringify('runs')} } }`);
  const serve = await startServe(dir, 'faults-serve', 3);
  const [s1, s2] = serve.sessions;
  const complete = new Map(); // session id -> complete 200 responses
  const sent = async (name, s, format, body, expect, { raw, stream = false } = {}) => {
    const f = FORMATS[format];
    const text = raw ?? JSON.stringify(body);
    const r = await request(`${s.base}${f.path}`, { key: s.key, body: text });
    const ok = r.status === 200 && f.done(r.text);
    if (ok) complete.set(s.id, (complete.get(s.id) ?? 0) + 1);
    // No request of this section should get a 5xx: the engine is healthy, so any 5xx is the proxy's.
    const serverError = r.status >= 500 ? 1 : 0;
    if (r.status !== expect) log(`    ${name} (${format}): got ${r.status} ${r.text.slice(0, 160)}`);
    tally(`${name} (${format}${stream ? ', streamed' : ''})`, { server_errors: serverError, misclassified: r.status !== expect && !serverError ? 1 : 0, crashes: serve.alive() ? 0 : 1 });
    return r;
  };
  for (const format of Object.keys(FORMATS)) {
    const f = FORMATS[format];
    for (const stream of [false, true]) await sent('healthy call', s1, format, f.body({ stream }), 200, { stream });
    await sent('malformed JSON', s1, format, null, 400, { raw: '{"model": "m", "messages": [' });
    await sent('body over the limit', s1, format, null, 413, { raw: JSON.stringify(f.body({ pad: 'x'.repeat(33 * 1024 * 1024) })) });
    await sent('bad role', s1, format, f.body(badRole[format]), 400);
    // A declared body over the limit, not a byte of it sent: the 413 must come from the headers alone.
    await new Promise((done) => {
      const c = net.connect(new URL(serve.root).port, '127.0.0.1');
      let got = '';
      const finish = (status) => { clearTimeout(t); c.destroy(); tally(`declared Content-Length over the limit, no body sent (${format})`, { server_errors: status >= 500 ? 1 : 0, misclassified: status === 413 ? 0 : 1 }); done(); };
      const t = setTimeout(() => finish(0), 5000);
      c.on('data', (d) => { got += d; if (got.includes('\r\n')) finish(Number(got.split(' ')[1])); });
      c.on('error', () => finish(0));
      c.write(`POST /s/${s1.id}${f.path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${s1.key}\r\ncontent-type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`);
    });
    await sent('huge max_tokens (capped)', s1, format, f.body({ [maxName[format]]: 1e9 }), 200);
    for (const bad of [{ top_p: 0 }, { top_p: 1.5 }, { temperature: -1 }, { temperature: 1e308 }, { [maxName[format]]: -5 }]) await sent(`invalid sampling ${JSON.stringify(bad)}`, s1, format, f.body(bad), 400);
    await sent('tool schema nested 200k deep', s1, format, null, 400, { raw: JSON.stringify(f.body()).replace(/}$/, `,"tools":[{"type":"function","name":"t","input_schema":${deep(200_000)},"parameters":${deep(200_000)}}]}`) });
    for (const size of [130 * 1024, 1024 * 1024, 10 * 1024 * 1024]) await sent(`tool result of ${size} bytes`, s1, format, f.body(toolResult[format]('abcdefghij\n'.repeat(Math.ceil(size / 11)).slice(0, size))), 200);
    // Keys: wrong, missing, another session's.
    for (const [what, key] of [['wrong key', 'cg-wrong'], ['missing key', undefined], ['another session\'s key', s2.key]]) {
      const r = await request(`${s1.base}${f.path}`, { key, body: JSON.stringify(f.body()) });
      tally(`${what} (${format})`, { server_errors: r.status >= 500 ? 1 : 0, misclassified: r.status !== 401 && r.status < 500 ? 1 : 0 });
    }
    // Client gone mid-stream: the server stays up and answers the next call.
    await new Promise((done) => {
      const req = http.request(`${s1.base}${f.path}`, { method: 'POST', headers: { authorization: `Bearer ${s1.key}`, 'x-api-key': s1.key, 'content-type': 'application/json' } }, (res) => { res.once('data', () => { req.destroy(); done(); }); });
      req.on('error', () => done());
      req.end(JSON.stringify(f.body({ stream: true })));
    });
    await sent('call after a client disconnected mid-stream', s1, format, f.body(), 200);
  }
  // A body just under the limit.
  await sent('body just under the 32 MB limit', s2, 'anthropic', FORMATS.anthropic.body(toolResult.anthropic('abcdefghij\n'.repeat(Math.ceil(28 * 1024 * 1024 / 11)))), 200);
  // Unknown session and route.
  for (const [what, url] of [['unknown session', `${serve.root}/s/nobody/v1/messages`], ['unknown route', `${s1.base}/v1/nothing`]]) {
    const r = await request(url, { key: s1.key, body: '{}' });
    tally(what, { server_errors: r.status >= 500 ? 1 : 0, misclassified: r.status !== 404 && r.status < 500 ? 1 : 0 });
  }
  // Slowloris: connections that send half a request and stall; others are still answered.
  const stalled = Array.from({ length: 32 }, () => { const c = net.connect(new URL(serve.root).port, '127.0.0.1'); c.on('error', () => {}); c.write(`POST /s/${s1.id}/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"mo`); return c; });
  await sleep(500);
  await sent('call while 32 connections stall mid-body (slowloris)', s2, 'chat', FORMATS.chat.body(), 200);
  for (const c of stalled) c.destroy();

  serve.child.kill('SIGINT');
  const exit = await Promise.race([serve.exited, sleep(20_000).then(() => ({ code: 'hung' }))]);
  tally('serve stops cleanly on SIGINT', { crashes: exit.code === 0 ? 0 : 1 });
  for (const [id, n] of complete) {
    const recorded = completedRecords(serve.runDir, id).filter((r) => r.finishReason !== 'aborted' && r.finishReason !== 'error').length;
    tally(`records of session ${id} (${n} complete responses)`, { lost_records: Math.max(0, n - recorded) });
  }
}

async function killServeUnderLoad() {
  log('serve: kill -9 under 16 streaming clients, then a restart with the same --name');
  const dir = project(`{ run: { outDir: ${JSON.stringify('runs')} } }`);
  const serve = await startServe(dir, 'faults-kill', 16);
  const complete = new Map();
  let stop = false;
  const formats = Object.keys(FORMATS);
  const clients = serve.sessions.map(async (s, i) => {
    const format = formats[i % 3];
    const f = FORMATS[format];
    while (!stop) {
      const r = await request(`${s.base}${f.path}`, { key: s.key, body: JSON.stringify(f.body({ stream: true })) });
      if (r.status === 200 && f.done(r.text)) complete.set(s.id, (complete.get(s.id) ?? 0) + 1);
      if (r.status === 0 || r.broken) break; // the server is gone
    }
  });
  await sleep(1500);
  serve.child.kill('SIGKILL');
  await serve.exited;
  stop = true;
  await Promise.all(clients);
  let lost = 0;
  const linesBefore = new Map();
  for (const s of serve.sessions) {
    const recs = completedRecords(serve.runDir, s.id);
    linesBefore.set(s.id, recs.length);
    lost += Math.max(0, (complete.get(s.id) ?? 0) - recs.filter((r) => r.finishReason !== 'aborted' && r.finishReason !== 'error').length);
  }
  const total = [...complete.values()].reduce((a, b) => a + b, 0);
  tally(`kill -9 of serve after ${total} complete streamed calls`, { lost_records: lost, crashes: total > 0 ? 0 : 1 });
  // Restarted with the same name: new session ids, the old files untouched.
  const again = await startServe(dir, 'faults-kill', 2);
  for (const s of again.sessions) await request(`${s.base}/v1/chat/completions`, { key: s.key, body: JSON.stringify(FORMATS.chat.body()) });
  again.child.kill('SIGKILL');
  await again.exited;
  const reused = again.sessions.filter((s) => linesBefore.has(s.id)).length;
  const changed = serve.sessions.filter((s) => completedRecords(serve.runDir, s.id).length !== linesBefore.get(s.id)).length;
  tally('serve restarted with the same --name uses new session files', { lost_records: reused + changed });
}

// ------------------------------------------------------------------------------------------
// fault accounting: real harness processes in sandboxes, against a proxy with faults

const CALL = (body) => `const r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' }, body: JSON.stringify(${body}) });`;
const GOOD = `{ model: 'm', messages: [{ role: 'user', content: 'go' }] }`;
const harness = (name, code) => ({
  name, wireFormat: 'openai-chat', check: async () => ({ ok: true }),
  async run(ctx) {
    const r = await ctx.sandbox.exec([process.execPath, '-e', `(async () => { ${code} })()`], { env: { OPENAI_BASE_URL: `${ctx.endpoint.baseUrl}/v1`, OPENAI_API_KEY: ctx.endpoint.apiKey }, timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return { exitCode: r.exitCode, timedOut: r.timedOut, logTail: `${r.stdout}${r.stderr}` };
  },
});
const WRITE = `const m = (await r.json()).choices[0].message; for (const c of m.tool_calls ?? []) { const a = JSON.parse(c.function.arguments); require('fs').writeFileSync(a.path, a.content); } process.exit(0);`;

async function faultAccounting() {
  log('rollouts: fault accounting with real harness processes in bubblewrap sandboxes');
  const p = await startScriptedProxy(({ sessionId }) => {
    if (sessionId.startsWith('engine-down')) return { failBefore: 'engine 500' };
    if (sessionId.startsWith('engine-mid')) return { text: 'partial answer that breaks', failAfterTokens: 4 };
    return { toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'ok' } }] };
  });
  const render = p.engine.chatTemplate.render.bind(p.engine.chatTemplate);
  p.engine.chatTemplate.render = (c) => { if (JSON.stringify(c.messages).includes('EXPLODE')) throw new RangeError('Maximum call stack size exceeded'); return render(c); };
  const socketPath = await listenInTemp(p.proxy);
  const task = { id: 't', category: 'c', instruction: 'write out.txt', setup: async () => {}, verify: async (ws) => { const ok = (await ws.exists('out.txt')) && (await ws.readFile('out.txt')).toString() === 'ok'; return { reward: ok ? 1 : 0, pass: ok, details: ok ? 'ok' : 'missing' }; } };
  const nested = `JSON.parse('{"a":'.repeat(300) + '1' + '}'.repeat(300))`;
  const cases = [
    ['ok-1', harness('agent', `${CALL(GOOD)} ${WRITE}`), 'ok'],
    ['crash-1', harness('crasher', `${CALL(GOOD)} process.exit(3);`), 'harness-error'],
    ['hang-1', harness('hanger', `${CALL(GOOD)} setInterval(() => {}, 1000);`), 'timeout', 1500],
    ['engine-down-1', harness('agent', `${CALL(GOOD)} if (!r.ok) process.exit(1); ${WRITE}`), 'infra-error'],
    ['engine-mid-1', harness('agent', `${CALL(`{ ...${GOOD}, stream: true }`)} await r.text(); process.exit(1);`), 'infra-error'],
    ['refused-1', harness('refused', `${CALL(`{ ...${GOOD}, tools: [{ type: 'function', function: { name: 't', parameters: ${nested} } }] }`)} process.exit(r.ok ? 0 : 1);`), 'infra-error'],
    ['refused-sampling-1', harness('refused', `${CALL(`{ ...${GOOD}, top_p: 0 }`)} process.exit(r.ok ? 0 : 1);`), 'infra-error'],
    ['recovers-1', harness('recovers', `{ ${CALL(`{ ...${GOOD}, temperature: -1 }`)} } ${CALL(GOOD)} ${WRITE}`), 'ok'],
    ['startup-hang-1', harness('stuck', `setInterval(() => {}, 1000);`), 'infra-error', 20_000, 'harness-start'],
    ['proxy-500-1', harness('proxy-fails', `${CALL(`{ model: 'm', messages: [{ role: 'user', content: 'EXPLODE' }] }`)} process.exit(r.status === 500 ? 1 : 0);`), 'infra-error'],
  ];
  const runner = new core.RolloutRunner({ runId: 'bench-faults', proxy: p.proxy, socketPath, sandboxes: core.localSandboxProvider({ log: () => {} }), concurrency: 2, timeoutMs: 20_000, startupTimeoutMs: 3000, infraRetries: 0 });
  const reports = await runner.run(cases.map(([id, h, , limit]) => ({ rolloutId: id, step: 1, task: limit ? { ...task, timeLimitMs: limit } : task, harness: h })));
  const by = new Map(reports.map((r) => [r.rolloutId, r]));
  for (const [id, , want, , wantClass] of cases) {
    const got = by.get(id)?.outcome;
    const classOk = !wantClass || by.get(id)?.infraClass === wantClass;
    tally(`rollout ${id} is ${want}${wantClass ? ` (${wantClass})` : ''}`, { misclassified: got === want && classOk ? 0 : 1 });
    if (got !== want) log(`    got ${got}: ${by.get(id)?.details}`);
  }
  await p.close();
}

// ------------------------------------------------------------------------------------------
// sandboxes: escapes, and gc beside a live run

async function sandboxEscapes() {
  log('sandboxes: escape attempts from a bubblewrap sandbox; the unisolated fallback refused');
  const p = await startScriptedProxy(() => ({ text: 'ok' }));
  const socketPath = await listenInTemp(p.proxy);
  try {
    if (core.bubblewrapPath()) {
      const lab = await openEscapeLab({ provider: core.localSandboxProvider({ log: () => {} }), socketPath, url: p.url });
      try {
        for (const e of ESCAPES) tally(`escape ${e} (bubblewrap)`, { escapes: (await lab.attempt(e)) ? 1 : 0 });
      } finally { await lab.close(); }
      await require('./disk')({ core, tally, log, socketPath, url: p.url });
    } else log('  (bubblewrap is not installed: only the refusal of the fallback is checked)');
    const refused = await core.localSandboxProvider({ forceFallback: true, log: () => {} }).create({ runId: 'bench-faults', rolloutId: 'fb', limits: {}, modelEndpoint: { socketPath, url: p.url } }).then(async (sb) => { await sb.destroy(); return false; }, (e) => e.code === 'CLAWGYM_SANDBOX_UNISOLATED');
    tally('the unisolated fallback is refused without allowUnisolated', { escapes: refused ? 0 : 1 });
  } finally {
    await p.close();
  }
}

async function gcBesideLiveRun() {
  log('gc: a killed run beside a live one');
  const fixture = join(repo, 'e2e', 'fixtures', 'interruptible-run.js');
  const sandboxRoot = join(tmpdir(), 'clawgym-sandboxes');
  const start = (runId) => {
    const runDir = mkdtempSync(join(tmpdir(), 'bench-faults-run-'));
    made.push(runDir);
    const child = spawn(process.execPath, [fixture, runId, runDir], { cwd: repo, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    const running = Promise.race([new Promise((ok) => { const t = setInterval(() => { if (out.includes('RUNNING')) { clearInterval(t); ok(); } }, 20); }), sleep(60_000).then(() => { throw new Error(`${runId} never ran`); })]);
    return { child, running, exited: new Promise((r) => child.on('exit', r)) };
  };
  const live = `gc-live-${process.pid}`;
  const dead = `gc-dead-${process.pid}`;
  const L = start(live);
  const D = start(dead);
  await Promise.all([L.running, D.running]);
  D.child.kill('SIGKILL');
  await D.exited;
  const liveBefore = readdirSync(join(sandboxRoot, live));
  const gc = spawnSync(process.execPath, [bin, 'gc'], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
  const liveAfter = existsSync(join(sandboxRoot, live)) ? readdirSync(join(sandboxRoot, live)) : [];
  const removedLive = gc.stdout.split('\n').filter((l) => l.includes(`/${live}/`)).length + liveBefore.filter((d) => !liveAfter.includes(d)).length;
  const deadLeft = existsSync(join(sandboxRoot, dead)) ? readdirSync(join(sandboxRoot, dead)).length : 0;
  tally('gc removes the killed run\'s sandboxes and nothing of the live run', { gc_live_removed: removedLive, crashes: gc.status === 0 ? 0 : 1, misclassified: deadLeft });
  L.child.kill('SIGINT');
  await Promise.race([L.exited, sleep(20_000)]);
}

/** Docker, on a private dockerd of the bench's own: the escape lab, and `clawgym gc` beside a live run. */
async function docker() {
  let plugin;
  let testing;
  try {
    plugin = require('../../plugins/sandbox-docker/dist/index.js');
    testing = require('../../plugins/sandbox-docker/dist/testing/index.js');
  } catch { log('docker: plugin not built, skipped'); return; }
  const missing = testing.dockerdMissing();
  if (missing) { log(`docker: skipped (${missing})`); return; }
  log('docker: escape attempts, and gc beside a live run (private dockerd)');
  const dockerd = await testing.startDockerd();
  const p = await startScriptedProxy(() => ({ text: 'ok' }));
  const socketPath = await listenInTemp(p.proxy);
  try {
    const image = await testing.buildSandboxImage(dockerd.dockerHost);
    const provider = new plugin.DockerSandboxProvider({ socketPath: dockerd.socketPath, image });
    const lab = await openEscapeLab({ provider, socketPath, url: p.url, node: 'node' });
    try {
      for (const e of ESCAPES) tally(`escape ${e} (docker)`, { escapes: (await lab.attempt(e)) ? 1 : 0 });
    } finally { await lab.close(); }
    // A runner in another process makes two sandboxes and is killed -9; this process keeps one of a live run.
    const code = `const { DockerSandboxProvider } = require(${JSON.stringify(join(repo, 'plugins', 'sandbox-docker', 'dist', 'provider.js'))});
      (async () => { const p = new DockerSandboxProvider({ socketPath: process.argv[1], image: process.argv[2], warmPool: 0 });
        for (const r of ['a', 'b']) await p.create({ runId: 'bench-dead', rolloutId: r, limits: {}, modelEndpoint: { socketPath: process.argv[3], url: 'http://127.0.0.1:9' } });
        process.stdout.write('READY\\n'); setInterval(() => {}, 1000); })().catch((e) => { console.error(e); process.exit(1); });`;
    const dead = spawn(process.execPath, ['-e', code, dockerd.socketPath, image, socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((ok, fail) => { dead.stdout.on('data', (d) => { if (String(d).includes('READY')) ok(); }); dead.on('exit', () => fail(new Error('the docker runner exited early'))); });
    dead.kill('SIGKILL');
    await new Promise((r) => dead.on('exit', r));
    const live = await provider.create({ runId: 'bench-live', rolloutId: 'l', limits: {}, modelEndpoint: { socketPath, url: p.url } });
    try {
      const dir = project(`{ sandbox: 'docker' }`);
      const gc = spawnSync(process.execPath, [bin, 'gc'], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...process.env, DOCKER_HOST: dockerd.dockerHost } });
      const left = await provider.docker.listContainers({ all: true, filters: { label: [plugin.LABEL_RUN] } });
      const liveGone = left.some((c) => c.Labels[plugin.LABEL_RUN] === 'bench-live') ? 0 : 1;
      const deadLeft = left.filter((c) => c.Labels[plugin.LABEL_RUN] === 'bench-dead').length;
      if (gc.status !== 0 || deadLeft) log(`    gc exit ${gc.status}: ${gc.stdout}${gc.stderr}`.slice(0, 400));
      tally('docker: gc removes the killed run\'s containers and nothing of the live run', { gc_live_removed: liveGone, crashes: gc.status === 0 ? 0 : 1, misclassified: deadLeft });
    } finally { await live.destroy(); await provider.close?.(); }
  } finally {
    await p.close();
    await dockerd.stop();
  }
}

// ------------------------------------------------------------------------------------------
// kill -9 of `clawgym run` at a rollout, an update and an evaluation, then --resume

const RUN_CONFIG = `{ name: 'tiny', engine: { use: 'embedded', options: { model: { dModel: 32, layers: 1, heads: 2, context: 384 } } }, trainer: { use: 'embedded', options: { model: { dModel: 32, layers: 1, heads: 2, context: 384 } } },
  harnesses: ['agentloop'], tasks: [{ use: 'builtin', options: { families: ['write'] } }], algorithm: 'grpo',
  run: { steps: 2, tasksPerStep: 2, groupSize: 2, concurrency: 4, evalTasks: 2, evalEvery: 0, rolloutTimeoutMs: 60000 } }`;

const jsonl = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).flatMap((l) => { try { return [JSON.parse(l)]; } catch { return []; } }) : []);
function callFiles(runDir) {
  const out = new Map();
  const walk = (d) => { for (const e of readdirSync(d, { withFileTypes: true })) { const p = join(d, e.name); if (e.isDirectory()) walk(p); else if (e.name.endsWith('.jsonl') && d.endsWith('calls')) out.set(p, jsonl(p)); } };
  if (existsSync(runDir)) walk(runDir);
  return out;
}

async function killRunAt(point) {
  const dir = project(RUN_CONFIG);
  const runDir = join(dir, 'runs', 'tiny');
  const state = () => { try { return JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')); } catch { return undefined; } };
  const recorded = (sub, prefix) => { const d = join(runDir, sub); return existsSync(d) && readdirSync(d).some((f) => f.startsWith(prefix) && readFileSync(join(d, f), 'utf8').includes('"callIndex"')); };
  const at = {
    rollout: () => state()?.stepStarts?.['2'] === 1 && recorded('calls', 's2a1-'),
    update: () => existsSync(join(runDir, 'checkpoint.tmp')),
    evaluation: () => state()?.step === 2 && recorded(join('eval', 'step-2', 'calls'), 'eval-'),
  }[point];
  const child = spawn(process.execPath, [bin, 'run'], { cwd: dir, stdio: 'ignore' });
  const killed = await new Promise((done) => {
    const t = setInterval(() => { if (at()) { clearInterval(t); child.kill('SIGKILL'); done(true); } }, 1);
    child.on('exit', () => { clearInterval(t); done(false); });
    setTimeout(() => { clearInterval(t); child.kill('SIGKILL'); done(false); }, 180_000);
  });
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.on('exit', r)));
  if (!killed) { tally(`kill -9 of run at ${point}: the run ended before the point was seen`, { crashes: 1 }); return; }
  const before = callFiles(runDir);
  const resumed = spawnSync(process.execPath, [bin, 'run', '--resume'], { cwd: dir, encoding: 'utf8', timeout: 240_000 });
  const metrics = jsonl(join(runDir, 'metrics.jsonl'));
  const steps = metrics.filter((m) => m.kind === 'step').map((m) => m.step).join(',');
  const evals = metrics.filter((m) => m.kind === 'eval').map((m) => m.step).join(',');
  const after = callFiles(runDir);
  let lost = 0;
  for (const [f, recs] of before) if ((after.get(f)?.length ?? 0) < recs.length) lost++;
  for (const recs of after.values()) if (recs.some((r, i) => r.callIndex !== i)) lost++; // two attempts in one file
  const ok = resumed.status === 0 && steps === '1,2' && evals === '0,2';
  if (!ok) log(`    resume exit ${resumed.status}, steps [${steps}], evals [${evals}]: ${resumed.stderr.slice(-300)}`);
  tally(`kill -9 of run at ${point}, then --resume`, { crashes: ok ? 0 : 1, lost_records: lost });
}

(async () => {
  const started = Date.now();
  const deadline = setTimeout(() => { log('bench:faults ran past 15 minutes'); process.exit(1); }, 15 * 60_000);
  try {
    await proxyCases();
    await killServeUnderLoad();
    await faultAccounting();
    await sandboxEscapes();
    await gcBesideLiveRun();
    await docker();
    log('run: kill -9 at a rollout, an update and an evaluation, then --resume');
    for (const point of ['rollout', 'update', 'evaluation']) await killRunAt(point);
    const owned = require('./ownership')({ project, tally, log, runConfig: RUN_CONFIG });
    for (const part of ['lock', 'launcher', 'unwritable', 'unrecorded', 'gcOtherProject']) await owned[part]();
  } finally {
    clearTimeout(deadline);
    for (const d of made) rmSync(d, { recursive: true, force: true });
  }
  log(`(${((Date.now() - started) / 1000).toFixed(0)} s)`);
  log(`RESULT faults ${Object.entries(totals).map(([k, v]) => `${k}=${v}`).join(' ')}`);
})().catch((err) => { console.error(err); process.exit(1); });
