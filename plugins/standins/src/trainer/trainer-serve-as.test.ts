import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/*
 * `clawgym trainer serve --as <release>` through the built CLI: the release it reproduces is the
 * one its routes and /openapi.json show (contracts/skyrl-v0.3.0.json, read from
 * NovaSky-AI/SkyRL@f5bc3b78d skyrl/tinker/api.py: OptimStepRequest without seq_id, :516-518);
 * a release it does not know is refused by the command line.
 */
const bin = resolve(__dirname, '../../../../core/bin/clawgym.js');
const config = resolve(__dirname, '__fixtures__', 'service.config.mjs');

describe('clawgym trainer serve --as', () => {
  const out = mkdtempSync(join(tmpdir(), 'clawgym-serve-as-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('--as skyrl@0.3.0 says so, serves that release\'s /openapi.json and refuses a route it lacks', async () => {
    const child = spawn(process.execPath, [bin, 'trainer', 'serve', '--config', config, '--port', '0', '--as', 'skyrl@0.3.0'], { env: { ...process.env, CLAWGYM_TEST_OUT: out }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout!.on('data', (d) => { text += d; });
    child.stderr!.on('data', (d) => { text += d; });
    try {
      const url = await new Promise<string>((ok, fail) => {
        const t = setInterval(() => { const m = /Tinker API\) on (http:\/\/127\.0\.0\.1:\d+)/.exec(text); if (m) { clearInterval(t); ok(m[1]!); } }, 50);
        child.on('exit', () => { clearInterval(t); fail(new Error(text)); });
      });
      expect(text).toMatch(/behaves as skyrl-fsdp of SkyRL 0\.3\.0 \(f5bc3b78d\)/);
      const doc = await (await fetch(`${url}/openapi.json`)).json() as { info: Record<string, string>; components: { schemas: Record<string, { properties: object }> } };
      expect(doc.info['x-commit']).toBe('f5bc3b78dfddfb352870d5d7430cd226e5785838');
      expect(Object.keys(doc.components.schemas.OptimStepRequest!.properties)).toEqual(['model_id', 'adam_params']);
      expect((await fetch(`${url}/api/v1/training_runs/m/checkpoints/c`, { method: 'DELETE' })).status).toBe(404);
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);

  it('refuses a release it does not reproduce, naming the ones it does', () => {
    const r = spawnSync(process.execPath, [bin, 'trainer', 'serve', '--config', config, '--as', 'skyrl@0.2.0'], { encoding: 'utf8', env: { ...process.env, CLAWGYM_TEST_OUT: out } });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--as <release>' argument 'skyrl@0.2.0' is invalid. Allowed choices are skyrl@main, skyrl@0.3.0/);
  });
});
