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
   * A reader that streams holds its code, the line being read and garbage the collector has not
   * yet taken back, none of which grows with the file; but V8 sizes its heap to the machine, so
   * that part is 200–260 MiB depending on where it runs. So each session is read at an eighth of
   * its size and then whole, by `inspect` and by the tree builder, and what each holds besides its
   * result (the tree builder's tree) must stay the same, and a small fraction of the file.
   */
  async function readAtTwoSizes(format: 'write-v1' | 'write-v2', check: (file: Record<string, unknown>, seen: string, tree: Record<string, unknown>) => void) {
    const inspect: number[] = [];
    const builder: number[] = [];
    for (const size of [SIZE / 8, SIZE]) {
      rmSync(join(dir, 'calls'), { recursive: true, force: true });
      const file = await child([format, join(dir, 'calls', 'big.jsonl'), String(size)]);
      expect(file.bytes).toBeGreaterThan(size);
      const seen = await child(['inspect', dir]);
      expect(seen.code).toBe(0);
      const tree = await child(['tree', join(dir, 'calls'), 'big']);
      check(file, seen.text as string, tree);
      inspect.push(seen.maxRss as number);
      builder.push((tree.maxRss as number) - (tree.treeBytes as number));
    }
    // Eight times the bytes, the same peak give or take the collector's timing (measured here:
    // inspect 204 → 206 MiB, the builder's rest 241 → 235 MiB); a small fraction of the file.
    for (const [small, whole] of [inspect, builder]) {
      expect(whole).toBeLessThan(small! + SIZE / 32);
      expect(whole).toBeLessThan(SIZE / 4);
    }
  }

  it('format 2: inspect and the tree builder (besides its tree) read it in the same memory as an eighth of it', async () => {
    await readAtTwoSizes('write-v2', (file, seen, tree) => {
      expect(seen).toMatch(new RegExp(`^big\\s+${file.calls}\\s+100\\.0%`, 'm'));
      // Every id is new here, so the tree holds about the file's size.
      expect(tree).toMatchObject({ calls: file.calls, lastPrompt: file.lastPrompt, nodes: 2 * (file.calls as number) });
    });
  }, 420_000);

  it('the earlier format (whole prompts as JSON numbers): inspect and the tree builder read it in the same memory as an eighth of it', async () => {
    await readAtTwoSizes('write-v1', (file, seen, tree) => {
      expect(seen).toMatch(new RegExp(`^big\\s+${file.calls}\\s`, 'm'));
      // One shared history, then each call's own id and output.
      expect(tree).toMatchObject({ calls: file.calls, lastPrompt: file.lastPrompt, tokens: 4_500_000 + (file.calls as number) * (1 + 256) });
    });
  }, 420_000);
});
