'use strict';
// bench:proxy-memory — the serving proxy's peak memory for three concurrent ~31 MB request bodies
// (a 28 MB tool result each, one per session), with the byte-level scripted engine and with
// Qwen3's tokenizer and template, beside what the stage table (stages.js: one body, stage by
// stage) says a request costs: what its session keeps (the conversation, for the next request's
// prefix match and the transcript, and its prompt ids, 4 bytes an id), of which the ids alone,
// plus the largest transient of a stage. Each figure is measured in a process of its own.
//
// The client runs in another process, so the RSS sampled here is the proxy's own.
const { execFile } = require('node:child_process');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { ServingProxy, CallStore, ScriptedEngine } = require('../../core/dist/index.js');
const { testModel } = require('../../plugins/model-hf/dist/testing/index.js');

const BODIES = 3;

function body(i) {
  const content = `${'abcdefghij'.slice(i % 10)}${'klmnopqrst uvwxyz0123456789 '.repeat(Math.ceil(28e6 / 28))}`.slice(0, 28e6);
  return JSON.stringify({ model: 'm', max_tokens: 16, messages: [
    { role: 'user', content: 'read the file' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'big.txt' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] },
  ] });
}

async function measure(label, template) {
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-proxy-memory-'));
  const store = new CallStore(join(dir, 'calls'));
  let promptIds = 0;
  const proxy = new ServingProxy({ engine: new ScriptedEngine(() => ({ text: 'read it' }), template), store, runId: 'bench', onRecord: async (r) => { promptIds += r.promptIds.length; } });
  await proxy.start();
  try {
    const sessions = Array.from({ length: BODIES }, (_, i) => proxy.openSession(`big-${i}`));
    let bytes = 0;
    const files = sessions.map((s, i) => {
      const text = body(i);
      bytes += Buffer.byteLength(text);
      const file = join(dir, `body-${i}.json`);
      writeFileSync(file, text);
      return { url: `${s.baseUrl}/v1/messages`, key: s.apiKey, file };
    });
    const client = `const fs = require('fs'); Promise.all(${JSON.stringify(files)}.map((f) => fetch(f.url, { method: 'POST', headers: { 'x-api-key': f.key }, body: fs.readFileSync(f.file) }).then(async (r) => { await r.text(); return r.status; }))).then((s) => process.stdout.write(s.join(',')))`;
    global.gc?.();
    await new Promise((r) => setTimeout(r, 200));
    const before = process.memoryUsage().rss;
    let peak = before;
    const sample = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
    const started = Date.now();
    const statuses = await new Promise((resolve, reject) => execFile(process.execPath, ['-e', client], { timeout: 300_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))));
    const seconds = (Date.now() - started) / 1000;
    clearInterval(sample);
    if (statuses !== Array(BODIES).fill(200).join(',')) throw new Error(`${label}: statuses ${statuses}`);
    const perBody = (peak - before) / bytes;
    const idsPerBody = (promptIds * 4) / bytes;
    console.log(`${label}: ${BODIES} bodies of ${(bytes / BODIES / 1e6).toFixed(1)} MB: RSS ${(before / 1e6).toFixed(0)} -> ${(peak / 1e6).toFixed(0)} MB (${perBody.toFixed(2)}x the bodies); ids ${(promptIds / BODIES / 1e6).toFixed(1)}M a body (${idsPerBody.toFixed(2)}x the bodies at 4 bytes an id); ${seconds.toFixed(1)} s`);
    return { perBody, idsPerBody, seconds };
  } finally {
    await proxy.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One measurement in this process: a stage table or the concurrent run, for one template; its figures as a last JSON line. */
async function part(name) {
  const [kind, model] = name.split(':');
  const template = model === 'qwen3' ? testModel('qwen3') : undefined;
  const label = model === 'qwen3' ? 'qwen3' : 'byte-level';
  if (kind === 'stages') {
    const { stages, print } = require('./stages');
    return print(label, await stages(body(0), template));
  }
  return measure(label, template);
}

/** Run a part in a process of its own (a clean heap and RSS for each figure), its output shown, its figures returned. */
function inChild(name) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', __filename, '--part', name], { timeout: 300_000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) { reject(new Error(`${name}: ${err.message}\n${stderr}`)); return; }
      const lines = stdout.trimEnd().split('\n');
      process.stdout.write(`${lines.slice(0, -1).join('\n')}\n`);
      resolve(JSON.parse(lines[lines.length - 1]));
    });
  });
}

(async () => {
  const at = process.argv.indexOf('--part');
  if (at >= 0) { console.log(JSON.stringify(await part(process.argv[at + 1]))); return; }
  const figures = [];
  for (const model of ['byte', 'qwen3']) {
    const table = await inChild(`stages:${model}`);
    const run = await inChild(`run:${model}`);
    // What one request costs by the stage table: what its session keeps, plus the largest
    // transient of one stage over what was live before it (a proxy's requests run their
    // synchronous stages one at a time, so concurrent requests add their kept memory, not their
    // transients).
    const bound = table.kept + table.transient;
    console.log(`${model}: peak ${run.perBody.toFixed(2)}x the bodies with ${BODIES} at once; by the stages: kept ${table.kept.toFixed(2)}x (of which ids ${run.idsPerBody.toFixed(2)}x), largest transient ${table.transient.toFixed(2)}x (${table.transientStage}), bound ${bound.toFixed(2)}x`);
    figures.push(`${model}_peak_per_body=${run.perBody.toFixed(2)} ${model}_bound_per_body=${bound.toFixed(2)} ${model}_kept_per_body=${table.kept.toFixed(2)} ${model}_ids_per_body=${run.idsPerBody.toFixed(2)} ${model}_transient_per_body=${table.transient.toFixed(2)} ${model}_stage_peak_rss_per_body=${table.rss.toFixed(2)} ${model}_s=${run.seconds.toFixed(1)}`);
  }
  console.log(`RESULT proxy-memory ${figures.join(' ')} target_per_body=2`);
})().catch((e) => { console.error(e); process.exit(1); });
