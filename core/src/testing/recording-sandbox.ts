import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecOptions, ExecResult, Sandbox } from '../contracts/sandbox';

/** A sandbox double for harness unit tests: records what the harness asks for, runs nothing. */
export interface RecordingSandbox extends Sandbox {
  readonly execs: { argv: string[]; options: ExecOptions }[];
  readonly files: Map<string, string>;
}

/**
 * Make a {@link RecordingSandbox}; `respond` decides each exec's result (default: exit 0).
 * Its `workspaceHostPath` is a real temp folder: `destroy()` removes it, so call it when done.
 */
export function recordingSandbox(respond: (argv: string[]) => Partial<ExecResult> = () => ({})): RecordingSandbox {
  const host = mkdtempSync(join(tmpdir(), 'clawgym-recording-'));
  const execs: RecordingSandbox['execs'] = [];
  const files = new Map<string, string>();
  return {
    id: 'recording',
    workspaceHostPath: host,
    workspacePath: '/workspace',
    homePath: '/home/agent',
    modelBaseUrl: 'http://127.0.0.1:9/s/recording',
    execs,
    files,
    async exec(argv, options = {}) {
      execs.push({ argv, options });
      return { exitCode: 0, signal: null, stdout: '', stderr: '', timedOut: false, ...respond(argv) };
    },
    async writeFile(path, data) { files.set(path, data.toString()); },
    async copyIn() {},
    async copyOut() {},
    async destroy() { rmSync(host, { recursive: true, force: true }); },
  };
}
