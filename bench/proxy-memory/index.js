'use strict';
// bench:proxy-memory — the serving proxy's peak memory for three concurrent ~31 MB request bodies
// (a 28 MB tool result each, one per session), with the byte-level scripted engine and with
// Qwen3's tokenizer and template; beside each, the floor its ids alone set (4 bytes an id, held
// by the session's ledger and the record being written), in bodies.
//
// The client runs in another process, so the RSS sampled here is the proxy's own.
const { execFile } = require('node:child_process');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { ServingProxy, CallStore, ScriptedEngine } = require('../../core/dist/index.js');
const { testModel } = require('../../core/dist/testing/index.js');

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

async function stageTables() {
  const { stages, print } = require('./stages');
  const byte = print('byte-level', await stages(body(0), undefined));
  const qwen = print('qwen3', await stages(body(0), testModel('qwen3')));
  console.log(`RESULT proxy-memory stages=1 byte_stage_peak_per_body=${byte.peak.toFixed(2)} byte_stage_peak_rss_per_body=${byte.rss.toFixed(2)} byte_kept_per_body=${byte.kept.toFixed(2)} qwen3_stage_peak_per_body=${qwen.peak.toFixed(2)} qwen3_stage_peak_rss_per_body=${qwen.rss.toFixed(2)} qwen3_kept_per_body=${qwen.kept.toFixed(2)}`);
}

(async () => {
  if (process.argv.includes('--stages')) { await stageTables(); return; }
  const byte = await measure('byte-level', undefined);
  const qwen = await measure('qwen3', testModel('qwen3'));
  console.log(`RESULT proxy-memory byte_peak_per_body=${byte.perBody.toFixed(2)} byte_ids_per_body=${byte.idsPerBody.toFixed(2)} qwen3_peak_per_body=${qwen.perBody.toFixed(2)} qwen3_ids_per_body=${qwen.idsPerBody.toFixed(2)} byte_s=${byte.seconds.toFixed(1)} qwen3_s=${qwen.seconds.toFixed(1)}`);
})().catch((e) => { console.error(e); process.exit(1); });
