import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { geminiCliHarness } from './index';

// `gemini --version` is a whole start-up of the CLI (it relaunches itself): 16 s on a busy two-core
// machine, run beside each evaluation's first rollouts, whose records waited for it. The version
// comes from the installed package instead; this bundle would fail if it were run.
describe('Gemini CLI harness, its version', () => {
  it("is the installed package's, read without starting the CLI", async () => {
    const root = mkdtempSync(join(tmpdir(), 'gemini-version-'));
    try {
      const pkg = join(root, 'node_modules', '@google', 'gemini-cli');
      mkdirSync(join(pkg, 'bundle'), { recursive: true });
      writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@google/gemini-cli', version: '0.61.0' }));
      writeFileSync(join(pkg, 'bundle', 'gemini.js'), 'process.exit(3);\n');
      await expect(geminiCliHarness.version!({ bin: join(pkg, 'bundle', 'gemini.js'), node: process.execPath })).resolves.toBe('0.61.0');
    } finally { rmSync(root, { recursive: true, force: true }); }
  });
});
