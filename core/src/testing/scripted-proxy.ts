import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelCallRecord } from '../contracts/records';
import { ScriptedEngine, type Script } from '../4-proxy/engine/scripted';
import { ServingProxy, type ProxyOptions } from '../4-proxy/server';
import { CallStore } from '../5-records/call-store';

/**
 * A serving proxy on loopback with a {@link ScriptedEngine} and a call store in a temp folder:
 * everything a harness or wire-format test needs. `close()` stops it.
 */
export async function startScriptedProxy(script: Script, options: Partial<ProxyOptions> & { runDir?: string; template?: ConstructorParameters<typeof ScriptedEngine>[1] } = {}) {
  const dir = options.runDir ?? mkdtempSync(join(tmpdir(), 'clawgym-proxy-'));
  const engine = new ScriptedEngine(script, options.template);
  const store = new CallStore(join(dir, 'calls'));
  const records: ModelCallRecord[] = [];
  const proxy = new ServingProxy({
    engine, store, runId: 'test-run',
    onRecord: async (r) => { records.push(r); },
    ...options,
  });
  const url = await proxy.start();
  const close = async () => {
    try {
      await proxy.stop();
    } finally {
      if (!options.runDir) await rm(dir, { recursive: true, force: true });
    }
  };
  return { proxy, engine, store, url, dir, records, close };
}
