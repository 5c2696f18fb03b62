import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isClawGymError } from '../errors';
import { requireInstalled } from './installed';

const dir = mkdtempSync(join(tmpdir(), 'clawgym-installed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a package only some commands need', () => {
  it('is found beside core when the project does not have it', () => {
    // The temp folder has no node_modules: @clawgym/model-hf comes from core's own install.
    const m = requireInstalled<{ loadChatModel?: unknown }>('@clawgym/model-hf', dir, 'clawgym template');
    expect(typeof m.loadChatModel).toBe('function');
  });

  it('missing, names the command that needs it and the install line', () => {
    let caught: unknown;
    try { requireInstalled('@clawgym/not-a-package', dir, 'clawgym template'); } catch (err) { caught = err; }
    expect(isClawGymError(caught) && caught.code).toBe('CLAWGYM_PLUGIN_NOT_FOUND');
    expect((caught as Error).message).toMatch(/clawgym template needs the package @clawgym\/not-a-package/);
    expect(isClawGymError(caught) && caught.hint).toBe('npm i -D @clawgym/not-a-package');
  });
});
