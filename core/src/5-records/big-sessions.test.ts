import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeIf } from '../testing/harnesses';

/**
 * Session files of 2 GiB, read by `inspect` and by the tree builder in child processes whose
 * peak RSS is measured: one in today's format (every call extends the last by a 4M-id tool
 * result), one in the earlier format (each call re-sends its whole 4.5M-id history as JSON
 * numbers, the size the five 30 MiB requests grow to). A few minutes: run in CI and with
 * CLAWGYM_BIG_TESTS=1, skipped visibly elsewhere.
 */
const GiB = 2 ** 30;
const SIZE = 2 * GiB;
const script = join(__dirname, '__fixtures__', 'big-session.cjs');

function child(args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => execFile(process.execPath, [script, ...args], { maxBuffer: 1 << 24, timeout: 240_000 }, (err, stdout, stderr) => {
    if (err) reject(new Error(`${args[0]} failed: ${err.message}\n${stderr}`));
    else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>);
  }));
}

function missing(): string | undefined {
  if (process.env.CI !== 'true' && process.env.CLAWGYM_BIG_TESTS !== '1') return 'writes and reads two 2 GiB files (a few minutes): set CLAWGYM_BIG_TESTS=1 (always run in CI)';
  const { bavail, bsize } = statfsSync(tmpdir());
  return bavail * bsize < 3 * SIZE ? `needs ${3 * SIZE / GiB} GiB free in ${tmpdir()} (${(bavail * bsize / GiB).toFixed(1)} GiB free)` : undefined;
}

describeIf(missing(), 'session files of 2 GiB', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'clawgym-big-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * `inspect` reads a line at a time, so its peak is its code, the longest line and the garbage
   * the collector has not yet taken back, none of which grows with the file: read the session at
   * an eighth of its size, then whole, and compare. (The absolute peak is machine-dependent: V8
   * sizes its heap to the machine, 200 MiB here and 260 MiB on CI's machine for these lines.)
   */
  async function inspectPeaks(format: 'write-v1' | 'write-v2', pattern: (calls: unknown) => RegExp) {
    const peaks: number[] = [];
    let file: Record<string, unknown> = {};
    for (const size of [SIZE / 8, SIZE]) {
      rmSync(join(dir, 'calls'), { recursive: true, force: true });
      file = await child([format, join(dir, 'calls', 'big.jsonl'), String(size)]);
      expect(file.bytes).toBeGreaterThan(size);
      const seen = await child(['inspect', dir]);
      expect(seen.code).toBe(0);
      expect(seen.text).toMatch(pattern(file.calls));
      peaks.push(seen.maxRss as number);
    }
    // Seven times the bytes, the same peak give or take the collector's timing; a small fraction of the file.
    expect(peaks[1]).toBeLessThan(peaks[0]! + SIZE / 32);
    expect(peaks[1]).toBeLessThan(SIZE / 4);
    return file;
  }

  it('format 2: inspect reads it in a fraction of its size; the tree builder in its tree and a bounded rest', async () => {
    const file = await inspectPeaks('write-v2', (calls) => new RegExp(`^big\\s+${calls}\\s+100\\.0%`, 'm'));
    const tree = await child(['tree', join(dir, 'calls'), 'big']);
    expect(tree).toMatchObject({ calls: file.calls, lastPrompt: file.lastPrompt, nodes: 2 * (file.calls as number) });
    // Every id is new here, so the tree holds about the file's size; what the builder holds
    // besides its tree (the line being read, the varints it decodes) stays small.
    expect(tree.maxRss as number).toBeLessThan((tree.treeBytes as number) + SIZE / 8);
  }, 300_000);

  it('the earlier format (whole prompts as JSON numbers): inspect and the tree builder read it in a fraction of its size', async () => {
    const file = await inspectPeaks('write-v1', (calls) => new RegExp(`^big\\s+${calls}\\s`, 'm'));
    const tree = await child(['tree', join(dir, 'calls'), 'big']);
    // One shared history, then each call's own id and output.
    expect(tree).toMatchObject({ calls: file.calls, lastPrompt: file.lastPrompt, tokens: 4_500_000 + (file.calls as number) * (1 + 256) });
    expect(tree.maxRss).toBeLessThan(SIZE / 4);
  }, 300_000);
});
