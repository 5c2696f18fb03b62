import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProviderCheck } from '../contracts/check';
import type { CommandRunner, Harness } from '../contracts/harness';
import type { Sandbox, SandboxProvider } from '../contracts/sandbox';
import { messageOf } from '../errors';

/** A harness to check, with its slot's options. */
export interface HarnessToCheck { harness: Harness; options: Record<string, unknown> }

/**
 * Check harness CLIs where rollouts will run them: inside one sandbox of `sandboxes`, whose
 * system (`system`, e.g. `image clawgym-openclaw:1`) is not this machine's, each harness's own
 * `version` command run through it. A harness without a version command cannot be checked
 * there and says so. The sandbox reaches no model: a socket nothing answers stands in for it.
 */
export async function checkClisInSandbox(sandboxes: SandboxProvider, system: string, harnesses: readonly HarnessToCheck[]): Promise<ProviderCheck[]> {
  const dir = await mkdtemp(join(tmpdir(), 'clawgym-doctor-'));
  const socketPath = join(dir, 'model.sock');
  const server = createServer((c) => c.destroy());
  await new Promise<void>((ok, fail) => { server.once('error', fail); server.listen(socketPath, () => ok()); });
  let box: Sandbox | undefined;
  try {
    try {
      box = await sandboxes.create({
        runId: `doctor-${process.pid}-${randomBytes(3).toString('hex')}`, rolloutId: 'cli-check',
        limits: { wallMs: 120_000 }, modelEndpoint: { socketPath, url: 'http://127.0.0.1:9/v1' },
        // What rollouts bind of this machine for these harnesses (a CLI installed outside the image).
        readOnlyPaths: [...new Set(harnesses.flatMap(({ harness, options }) => harness.hostPaths?.(options) ?? []))],
      });
    } catch (err) {
      const reason = `cannot start a sandbox (${system}) to look for it there: ${messageOf(err)}`;
      return harnesses.map(() => ({ ok: false, reason }));
    }
    const inside = box;
    const run: CommandRunner = async (argv) => {
      const r = await inside.exec([...argv], { timeoutMs: 60_000 });
      return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    };
    const out: ProviderCheck[] = [];
    for (const { harness, options } of harnesses) {
      if (!harness.version) { out.push({ ok: false, reason: `the harness has no version command, so it cannot be looked for inside the sandbox (${system})` }); continue; }
      const version = await harness.version(options, run).catch(() => undefined);
      out.push(version
        ? { ok: true, reason: `${harness.name} ${version} inside the sandbox (${system})` }
        : { ok: false, reason: `${harness.name} does not answer --version inside the sandbox (${system}): its CLI is not in that system, or not where the harness options say`, install: `put the CLI into the sandbox's system (the OpenClaw image: bash scripts/openclaw-image.sh), or fix the harness's bin/entry options` });
    }
    return out;
  } finally {
    await box?.destroy().catch(() => undefined);
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
