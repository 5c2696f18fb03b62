import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Harness, HarnessRunResult } from '../contracts/harness';
import type { ModelCallRecord } from '../contracts/records';
import type { Sandbox } from '../contracts/sandbox';
import type { Script } from '../4-proxy/engine/scripted';
import { createNetnsSandbox } from '../2-sandbox/netns';
import { startRequestCapture } from './request-capture';
import { startScriptedProxy } from './scripted-proxy';

/**
 * Run a real harness once, end to end, the way a rollout will: a scripted engine behind the
 * serving proxy (reached only through a Unix socket), the harness in a sandbox whose only
 * network is its own loopback. Returns the harness result, the recorded calls and the workspace.
 * With `CLAWGYM_E2E_RUNS=<dir>` the records are kept there for `clawgym inspect <dir>`; with
 * `CLAWGYM_E2E_CAPTURE=<dir>` every request body the harness sent is written to `<dir>/<rollout>/`.
 * `close()` stops the proxy, destroys the sandbox and removes the temp folders; call it when done.
 */
export async function runHarnessOnce(opts: {
  harness: Harness;
  options?: Record<string, unknown>;
  script: (ctx: Parameters<Script>[0] & { workspace: string }) => ReturnType<Script>;
  instruction: string;
  timeoutMs: number;
  rolloutId?: string;
  /** Keep the call records in `<runDir>/calls` (for `clawgym inspect`); default: a temp folder. */
  runDir?: string;
  /** The tokenizer and chat template the scripted engine answers with (default: byte-level ChatML), e.g. `testModel('qwen3')`. */
  template?: NonNullable<Parameters<typeof startScriptedProxy>[1]>['template'];
}): Promise<{ result: HarnessRunResult; records: ModelCallRecord[]; sandbox: Sandbox; close: () => Promise<void> }> {
  const rolloutId = opts.rolloutId ?? opts.harness.name;
  let workspace = '';
  const p = await startScriptedProxy((ctx) => opts.script({ ...ctx, workspace }), { runDir: opts.runDir ?? process.env.CLAWGYM_E2E_RUNS, template: opts.template });
  const socketDir = mkdtempSync(join(tmpdir(), 'clawgym-sock-'));
  const socketPath = join(socketDir, 'proxy.sock');
  let sandbox: Sandbox | undefined;
  const capture = process.env.CLAWGYM_E2E_CAPTURE;
  let captureServer: Awaited<ReturnType<typeof startRequestCapture>> | undefined;
  const close = async () => {
    if (captureServer) await new Promise<void>((resolve) => { captureServer!.close(() => resolve()); captureServer!.closeAllConnections(); });
    await p.close();
    await sandbox?.destroy();
    await rm(socketDir, { recursive: true, force: true });
  };
  try {
    if (capture) captureServer = await startRequestCapture(socketPath, p.url, join(capture, rolloutId));
    else await p.proxy.listenUnix(socketPath);
    // Classified as in a real rollout (RolloutRunner does the same), so side calls show as such.
    const session = p.proxy.openSession(rolloutId, { classify: opts.harness.classifyCall?.bind(opts.harness) });
    sandbox = await createNetnsSandbox({ runId: 'e2e', rolloutId, limits: {}, modelEndpoint: { socketPath, url: session.baseUrl } });
    workspace = sandbox.workspacePath;
    const result = await opts.harness.run({
      sandbox, instruction: opts.instruction, timeoutMs: opts.timeoutMs, signal: new AbortController().signal,
      endpoint: { baseUrl: sandbox.modelBaseUrl, apiKey: session.apiKey, model: 'clawgym-policy' },
      options: opts.options ?? {},
    });
    await p.proxy.closeSession(rolloutId);
    const records = await p.store.read(rolloutId);
    return { result, records, sandbox, close };
  } catch (err) {
    // The caller never gets `close`: clean up here.
    await close().catch(() => undefined);
    throw err;
  }
}
