import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointDir, SHIPPED_CHECKPOINTS } from './index';

describe('the checkpoint option', () => {
  const root = mkdtempSync(join(tmpdir(), 'clawgym-checkpoint-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const ctx = { runDir: join(root, 'runs', 'x'), seed: 1, rootDir: root };

  it('names the cold start this package ships, found wherever the config is', () => {
    expect(checkpointDir(ctx, 'cold-start')).toBe(join(SHIPPED_CHECKPOINTS, 'cold-start'));
  });

  it('is a folder beside the config first, and a path is never looked up among the shipped ones', () => {
    mkdirSync(join(root, 'cold-start'));
    expect(checkpointDir(ctx, 'cold-start')).toBe(join(root, 'cold-start'));
    expect(checkpointDir(ctx, 'sub/cold-start')).toBe(join(root, 'sub', 'cold-start'));
    // A name nobody ships stays the config's path, which the load's error then names.
    expect(checkpointDir(ctx, 'nope')).toBe(join(root, 'nope'));
  });
});
