import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// HARNESS_DIR is read when the module loads: each case loads it with its own CLAWGYM_HARNESS_DIR.
function load(dir: string): typeof import('./harnesses') {
  const before = process.env.CLAWGYM_HARNESS_DIR;
  process.env.CLAWGYM_HARNESS_DIR = dir;
  try {
    let mod: typeof import('./harnesses') | undefined;
    jest.isolateModules(() => { mod = require('./harnesses') as typeof import('./harnesses'); });
    return mod!;
  } finally {
    if (before === undefined) delete process.env.CLAWGYM_HARNESS_DIR; else process.env.CLAWGYM_HARNESS_DIR = before;
  }
}

const touch = (path: string) => { mkdirSync(dirname(path), { recursive: true }); writeFileSync(path, ''); };

describe('the installed real harnesses, as tests and bench:harness-overhead find them', () => {
  it("gives each plugin the options that point it at its CLI: OpenClaw's script is its `entry`, the others' a `bin`; oh-my-pi's runtime is its `bun`", () => {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-harness-dir-'));
    try {
      touch(join(dir, 'node24/node_modules/node/bin/node'));
      touch(join(dir, 'openclaw/node_modules/openclaw/openclaw.mjs'));
      touch(join(dir, 'codex/node_modules/.bin/codex'));
      touch(join(dir, 'omp/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js'));
      touch(join(dir, 'omp/node_modules/bun/bin/bun.exe'));
      const h = load(dir);
      expect(h.REAL_HARNESSES).toEqual(expect.arrayContaining(['claude-code', 'openclaw', 'codex', 'qwen-code', 'opencode', 'gemini-cli', 'pi', 'kilo', 'grok']));
      expect(h.installedHarnessOptions('openclaw')).toEqual({ entry: join(dir, 'openclaw/node_modules/openclaw/openclaw.mjs'), node: join(dir, 'node24/node_modules/node/bin/node') });
      expect(h.installedHarnessOptions('codex')).toEqual({ bin: join(dir, 'codex/node_modules/.bin/codex') });
      expect(h.installedHarnessOptions('pi')).toBeUndefined();
      // oh-my-pi's script runs under the Bun installed beside it, its plugin's `bun` option.
      expect(h.installedHarnessOptions('omp')).toEqual({ bin: join(dir, 'omp/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js'), bun: join(dir, 'omp/node_modules/bun/bin/bun.exe') });
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});
