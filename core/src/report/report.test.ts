import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeIf } from '../testing';
import { chartsOf } from './html';
import { writeReport } from './report';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** Metrics as clawgym run writes them: two harnesses, evals at 0, 2 and 4. */
function runDir(): string {
  const dir = tmp('report-');
  const lines: object[] = [];
  for (const step of [0, 2, 4]) lines.push({ kind: 'eval', step, time: 0, values: { pass1: step / 10, 'pass1/agentloop/all': step / 10, 'pass1/agentloop/write': step / 8 } });
  for (let step = 1; step <= 4; step++) {
    lines.push({ kind: 'step', step, time: 0, values: {
      reward: step / 8, 'reward/agentloop': step / 8, 'reward/claude-code': step / 10, pass: step / 8, rollouts: 16, infra: step === 3 ? 1 : 0, calls: 40, trained: 15,
      seconds: 10, 'filter/dead-leaf': 3, 'filter/auxiliary': 0, 'train/mismatchAbsLogp': 0.001, 'train/mismatchKl': 0.0001, 'train/clipFraction': 0.02, 'train/tokens': 900,
    } });
  }
  writeFileSync(join(dir, 'metrics.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return dir;
}

describe('run report', () => {
  it('charts reward and held-out Pass@1 per harness and category, trees, mismatch and throughput', () => {
    const events = readFileSync(join(runDir(), 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const charts = chartsOf(events);
    expect(charts.map((c) => c.id)).toEqual(['reward', 'pass1', 'trees', 'mismatch', 'throughput']);
    expect(charts[0]!.series.map((s) => s.name)).toEqual(['all', 'agentloop', 'claude-code']);
    expect(charts[1]!.series.map((s) => s.name)).toEqual(['all', 'agentloop/all', 'agentloop/write']);
    expect(charts[1]!.series[0]!.points).toEqual([[0, 0], [2, 0.2], [4, 0.4]]);
    expect(charts[4]!.series[1]!.points[0]).toEqual([1, 90]);
  });

  it('writes one self-contained file with no external references', async () => {
    const file = await writeReport(runDir());
    const html = readFileSync(file, 'utf8');
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
    expect(html).toContain('0.0% → 40.0%');
  });
});

const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

describeIf(chromium ? undefined : 'Chromium is not installed (apt-get install chromium)', 'run report in headless Chromium', () => {
  it('draws every chart', async () => {
    const file = await writeReport(runDir());
    const profile = tmp('chromium-');
    const r = spawnSync(chromium!, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`, '--dump-dom', `file://${file}`], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stdout).toContain('data-charts-drawn="5"');
    for (const id of ['reward', 'pass1', 'trees', 'mismatch', 'throughput']) expect(r.stdout).toMatch(new RegExp(`id="chart-${id}"[^>]*data-drawn="[1-9]`));
    expect((r.stdout.match(/<polyline/g) ?? []).length).toBeGreaterThanOrEqual(12);
  }, 90_000);
});
