'use strict';
// bench:harness-overhead — rollouts per minute through each real CLI with an instant scripted
// model, bare (the CLI started here, pointed straight at a scripted model server: no sandbox,
// proxy, records or grading) against ClawGym (`clawgym eval --engine oracle`: sandbox, proxy,
// records, grading), at concurrency 1 and 2, in pairs whose order alternates, in one run. Both
// sides play the same two calls: write a file with the CLI's own write tool, then "Done.".
//   npm run bench:harness-overhead [-- --rollouts N --pairs P --harnesses claude-code,kilo,grok]
// Env: BENCH_HO_ROLLOUTS (default 6 per side and concurrency), BENCH_HO_PAIRS (2), BENCH_HO_HARNESSES
// (the installed CLIs that play oracles). The ClawGym side runs under a child subreaper and counts
// the processes it left behind (zombies=). Ends with
//   RESULT harness-overhead harnesses=N min_ratio_c1=… min_ratio_c2=… zombies=… <harness>_c1=… <harness>_c2=… (ratios: ClawGym's
//   rollouts per minute over the bare CLI's; a harness's dashes read as underscores)
const { spawn, spawnSync } = require('node:child_process');
const { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, readFileSync, rmSync, existsSync } = require('node:fs');
const http = require('node:http');
const { tmpdir } = require('node:os');
const { dirname, join } = require('node:path');

const repo = join(__dirname, '..', '..');
const { installedHarness } = require(join(repo, 'core', 'dist', 'testing', 'harnesses.js'));
const { recordingSandbox } = require(join(repo, 'core', 'dist', 'testing', 'recording-sandbox.js'));

const arg = (name, env, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : process.env[env] ?? dflt;
};
const ROLLOUTS = Number(arg('rollouts', 'BENCH_HO_ROLLOUTS', '6'));
const PAIRS = Number(arg('pairs', 'BENCH_HO_PAIRS', '2'));
/** The CLIs whose plugin maps the oracle's calls to its own tools (`oracleCall`), and their plugin. */
const PLUGINS = { 'claude-code': 'harness-claude-code', kilo: 'harness-kilo', grok: 'harness-grok' };
const HARNESSES = arg('harnesses', 'BENCH_HO_HARNESSES', Object.keys(PLUGINS).join(',')).split(',')
  .filter((h) => PLUGINS[h] && !('missing' in installedHarness(h)));

/** The harness object a plugin package exports. */
function harnessOf(name) {
  const mod = require(join(repo, 'plugins', PLUGINS[name], 'dist', 'index.js'));
  return Object.values(mod).find((v) => v && typeof v === 'object' && v.name === name && typeof v.run === 'function');
}

// ---- the bare side: a scripted model server speaking the CLI's format, and the CLI started here.

const hasToolResult = (body) => (body.messages ?? []).some((m) => m.role === 'tool'
  || (Array.isArray(m.content) && m.content.some((b) => b && b.type === 'tool_result')));

function sseAnthropic(res, model, call) {
  const ev = (type, d) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...d })}\n\n`);
  ev('message_start', { message: { id: 'msg_b', type: 'message', role: 'assistant', model, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 0 } } });
  if (call) {
    ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_b1', name: call.name, input: {} } });
    ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.arguments) } });
  } else {
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Done.' } });
  }
  ev('content_block_stop', { index: 0 });
  ev('message_delta', { delta: { stop_reason: call ? 'tool_use' : 'end_turn' }, usage: { output_tokens: 5 } });
  ev('message_stop', {});
  res.end();
}

function chatReply(res, body, call) {
  const message = call ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_b1', type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] } : { role: 'assistant', content: 'Done.' };
  const finish = call ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c_b', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta, finishReason, u) => res.write(`data: ${JSON.stringify({ id: 'c_b', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...(u ? { usage: u } : {}) })}\n\n`);
  chunk(call ? { role: 'assistant', tool_calls: [{ index: 0, ...message.tool_calls[0] }] } : { role: 'assistant', content: 'Done.' }, null);
  chunk({}, finish, usage);
  res.end('data: [DONE]\n\n');
}

/** A model server answering the first call with `writeCall` and any later one with "Done.". */
function scriptedServer(writeCall) {
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => { text += d; });
    req.on('end', () => {
      let body = {};
      try { body = JSON.parse(text || '{}'); } catch { /* not JSON */ }
      const call = hasToolResult(body) ? undefined : writeCall;
      if (req.method === 'POST' && req.url.includes('/messages') && !req.url.includes('count_tokens')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        sseAnthropic(res, body.model, call);
      } else if (req.method === 'POST' && req.url.includes('/chat/completions')) {
        chatReply(res, body, call);
      } else {
        res.writeHead(req.method === 'HEAD' ? 200 : 404, { 'content-type': 'application/json' });
        res.end(req.method === 'HEAD' ? '' : '{}');
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** How the plugin starts the CLI: its files, argv and environment, from a recording sandbox. */
async function invocationOf(harness, options, baseUrl) {
  const sandbox = recordingSandbox();
  await harness.run({ sandbox, endpoint: { baseUrl, apiKey: 'bench-key', model: 'policy' }, instruction: 'Create out.txt containing hi', timeoutMs: 120_000, signal: new AbortController().signal, options });
  const run = sandbox.execs[sandbox.execs.length - 1];
  return { files: [...sandbox.files], argv: run.argv, env: run.options.env ?? {}, home: sandbox.homePath, workspace: sandbox.workspacePath };
}

/** One bare rollout: a fresh HOME and workspace, the CLI run there; resolves with its wall ms. */
function bareRollout(inv, root, i) {
  const dir = join(root, `b${i}`);
  const swap = (s) => s.split(inv.home).join(join(dir, 'home')).split(inv.workspace).join(join(dir, 'workspace'));
  mkdirSync(join(dir, 'workspace'), { recursive: true });
  mkdirSync(join(dir, 'home', 'tmp'), { recursive: true });
  for (const [path, text] of inv.files) { mkdirSync(dirname(swap(path)), { recursive: true }); writeFileSync(swap(path), swap(text)); }
  const env = { PATH: process.env.PATH, LANG: 'C.UTF-8' };
  for (const [k, v] of Object.entries(inv.env)) env[k] = swap(String(v));
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(inv.argv[0], inv.argv.slice(1).map(swap), { cwd: join(dir, 'workspace'), env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err = (err + d).slice(-2000); });
    child.on('exit', (code) => {
      const ok = code === 0 && existsSync(join(dir, 'workspace', 'out.txt'));
      rmSync(dir, { recursive: true, force: true });
      if (ok) resolve(Date.now() - t0); else reject(new Error(`bare rollout exited ${code} without out.txt: ${err}`));
    });
  });
}

/** `n` rollouts, `c` at a time; resolves with the whole wall ms. */
async function pool(n, c, one) {
  const t0 = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: c }, async () => { while (next < n) await one(next++); }));
  return Date.now() - t0;
}

// ---- the ClawGym side: `clawgym eval --engine oracle` under a child subreaper.

const SUBREAPER = String.raw`
syscall(157, 36, 1, 0, 0, 0) == 0 or die "prctl: $!\n";
my $pid = fork(); if ($pid == 0) { exec @ARGV or die "exec: $!\n" }
waitpid($pid, 0); my $rc = $? >> 8; select(undef, undef, undef, 0.5);
opendir(my $d, '/proc') or die; my $n = 0;
for my $p (grep { /^\d+$/ } readdir $d) { open(my $s, '<', "/proc/$p/stat") or next; my $l = <$s>;
  my @f = split / /, substr($l, rindex($l, ')') + 2); if ($f[1] == $$) { $n++; kill 'KILL', $p } }
1 while waitpid(-1, 0) > 0; print STDERR "ORPHANS $n\n"; exit $rc;`;

function clawgymProject(name, options) {
  const dir = mkdtempSync(join(tmpdir(), `bench-ho-${name}-`));
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"name":"bench-harness-overhead","private":true}');
  writeFileSync(join(dir, 'clawgym.config.mjs'), `export default {
  harnesses: [${JSON.stringify({ use: name, options })}],
  tasks: [{ use: 'builtin', options: { families: ['vocab-upper'] } }],
  run: { outDir: ${JSON.stringify(join(dir, 'runs'))}, rolloutTimeoutMs: 300000 },
};\n`);
  return dir;
}

/** One `clawgym eval` of `n` rollouts at concurrency `c`: wall ms, its rollouts' phases, orphans left. */
function clawgymRun(dir, n, c, tag) {
  const t0 = Date.now();
  const r = spawnSync('/usr/bin/perl', ['-e', SUBREAPER, process.execPath, join(repo, 'core', 'bin', 'clawgym.js'), 'eval', '--engine', 'oracle', '--limit', String(n), '--concurrency', String(c), '--name', tag, '--json'], { cwd: dir, encoding: 'utf8', timeout: 1_800_000 });
  const wall = Date.now() - t0;
  const orphans = Number(/ORPHANS (\d+)/.exec(r.stderr)?.[1] ?? NaN);
  if (r.status !== 0) throw new Error(`clawgym eval failed (exit ${r.status}): ${r.stderr.slice(-2000)}`);
  const evalJson = JSON.parse(readFileSync(join(dir, 'runs', tag, 'eval.json'), 'utf8'));
  const failed = evalJson.rollouts.filter((x) => !x.pass);
  if (failed.length) throw new Error(`clawgym eval: ${failed.length} rollout(s) did not pass: ${failed[0].details}`);
  return { wall, rollouts: evalJson.rollouts, orphans };
}

// ---- the run

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const perMin = (n, ms) => (60_000 * n) / ms;

async function benchHarness(name, root) {
  const harness = harnessOf(name);
  const cli = installedHarness(name);
  const options = { bin: cli.bin, ...(cli.node ? { node: cli.node } : {}) };
  const writeCall = harness.oracleCall({ name: 'write_file', arguments: { path: 'out.txt', content: 'hi' } });
  const server = await scriptedServer(writeCall);
  const inv = await invocationOf(harness, options, `http://127.0.0.1:${server.address().port}`);
  const project = clawgymProject(name, options);
  const out = { name, c1: [], c2: [], phases: [], bareMs: [], orphans: 0 };
  let run = 0;
  try {
    for (let p = 0; p < PAIRS; p++) {
      for (const c of [1, 2]) {
        const sides = p % 2 === 0 ? ['bare', 'clawgym'] : ['clawgym', 'bare'];
        const rate = {};
        for (const side of sides) {
          if (side === 'bare') {
            let i = 0;
            const ms = await pool(ROLLOUTS, c, async () => { out.bareMs.push(await bareRollout(inv, root, `${run}-${i++}`)); });
            rate.bare = perMin(ROLLOUTS, ms);
          } else {
            const r = clawgymRun(project, ROLLOUTS, c, `r${run}`);
            rate.clawgym = perMin(ROLLOUTS, r.wall);
            out.orphans += r.orphans;
            out.phases.push(...r.rollouts.map((x) => ({ ...x.phases, durationMs: x.durationMs })));
          }
        }
        run++;
        out[`c${c}`].push(rate.clawgym / rate.bare);
        console.log(`${name} pair ${p + 1} c=${c} (${sides.join(' then ')}): bare ${rate.bare.toFixed(1)}/min, clawgym ${rate.clawgym.toFixed(1)}/min, ratio ${(rate.clawgym / rate.bare).toFixed(3)}`);
      }
    }
  } finally {
    server.close();
    rmSync(project, { recursive: true, force: true });
  }
  return out;
}

function explain(r) {
  const m = (k) => median(r.phases.map((x) => x[k] ?? 0));
  const bare = median(r.bareMs);
  const dur = m('durationMs');
  console.log(`${r.name}: a rollout takes ${dur} ms through ClawGym (median) against ${bare} ms bare; ClawGym's own part: sandbox ${m('sandboxMs')} ms, task setup ${m('setupMs')} ms, grading ${m('verifyMs')} ms, harness with the proxy and records ${m('harnessMs')} ms (the CLI's own time included), the rest ${Math.max(0, dur - m('sandboxMs') - m('setupMs') - m('harnessMs') - m('verifyMs'))} ms`);
}

async function main() {
  if (!HARNESSES.length) { console.error(`no CLI to measure: install one (scripts/install-harnesses.sh ${Object.keys(PLUGINS).join(' ')})`); process.exit(1); }
  console.log(`harness overhead: ${HARNESSES.join(', ')}; ${PAIRS} alternated pair(s) of ${ROLLOUTS} rollouts per side at concurrency 1 and 2`);
  const root = mkdtempSync(join(tmpdir(), 'bench-ho-bare-'));
  const results = [];
  try {
    for (const h of HARNESSES) { const r = await benchHarness(h, root); explain(r); results.push(r); }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const fmt = (x) => x.toFixed(3);
  const key = (n) => n.replace(/-/g, '_'); // RESULT keys are word characters: claude-code reads claude_code
  const per = results.map((r) => `${key(r.name)}_c1=${fmt(median(r.c1))} ${key(r.name)}_c2=${fmt(median(r.c2))}`).join(' ');
  const min = (c) => fmt(Math.min(...results.map((r) => median(r[c]))));
  console.log(`RESULT harness-overhead harnesses=${results.length} min_ratio_c1=${min('c1')} min_ratio_c2=${min('c2')} zombies=${results.reduce((n, r) => n + r.orphans, 0)} ${per}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
