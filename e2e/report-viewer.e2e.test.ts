import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { bubblewrapPath, readRollouts, serveReport, type RolloutEntry } from '@clawgym/core';
import { describeIf, removeTempProjects, tempProject } from '@clawgym/core/testing';
import { chromiumMissing, launchChromium } from './browser/chromium';

const repo = resolve(__dirname, '..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');
/** Where the screenshots go: CLAWGYM_SCREENSHOTS, else the temporary project (removed after). */
const shots = () => process.env.CLAWGYM_SCREENSHOTS;

const missing = bubblewrapPath() ? chromiumMissing() : 'bubblewrap is not installed (apt-get install bubblewrap)';

/**
 * The report as a user looks at it, in headless Chromium, on a real run: the embedded model
 * through agentloop on two built-in task families, two GRPO steps. The expectations come from
 * the run's own rollout log (read through core's reader), not from numbers written here.
 */
describeIf(missing, 'the report in a browser', () => {
  let dir: string;
  let runDir: string;
  let entries: RolloutEntry[];
  let browser: Browser;

  beforeAll(async () => {
    dir = tempProject({ 'clawgym.config.mjs': `const model = { model: { dModel: 32, layers: 1, heads: 2, context: 384 } };
export default {
  name: 'tiny', engine: { use: 'embedded', options: model }, trainer: { use: 'embedded', options: model },
  harnesses: ['agentloop'], tasks: [{ use: 'builtin', options: { families: ['write', 'vocab-upper'] } }], algorithm: 'grpo',
  run: { steps: 2, tasksPerStep: 3, groupSize: 2, concurrency: 4, evalTasks: 2, evalEvery: 0, rolloutTimeoutMs: 60000 },
};\n` }, 'clawgym-report-');
    const r = spawnSync(process.execPath, [bin, 'run'], { cwd: dir, encoding: 'utf8', timeout: 240_000 });
    if (r.status !== 0) throw new Error(`the run failed: ${r.stdout}\n${r.stderr}`);
    runDir = join(dir, 'runs', 'tiny');
    entries = [];
    for await (const e of readRollouts(runDir)) entries.push(e);
    browser = await launchChromium();
  }, 300_000);
  afterAll(async () => { await browser?.close(); removeTempProjects(); });

  async function open(url: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    (page as Page & { errors?: string[] }).errors = errors;
    await page.goto(url);
    await page.waitForSelector('body[data-list-loaded]', { timeout: 30_000 });
    return page;
  }
  const matching = async (page: Page) => Number(await page.getAttribute('#list-count', 'data-matching'));
  const shot = async (page: Page, name: string) => {
    const file = join(shots() ?? dir, `${name}.png`);
    mkdirSync(join(file, '..'), { recursive: true });
    const png = await page.screenshot({ path: file, fullPage: true });
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.length).toBeGreaterThan(20_000);
  };

  /** Open the rollout of `entry` from the list and check what the panel shows against the log. */
  async function opensRollout(page: Page, entry: RolloutEntry) {
    const ord = entries.indexOf(entry);
    await page.fill('#f-task', entry.taskId);
    await page.click(`#rollout-rows tr[data-ord="${ord}"]`);
    await page.waitForSelector(`#detail[data-ord="${ord}"] #calls`, { timeout: 30_000 });
    expect(await page.locator('#detail .call').count()).toBe(entry.calls);
    expect(await page.locator('#detail .tree-node').count()).toBe(entry.tree!.nodes.length);
    expect(await page.locator('#detail .tree-node.trained').count()).toBe(entry.tree!.nodes.filter((n) => n.advantage !== undefined && !n.removedBy && !n.auxiliary && !entry.tree!.dropped && n.kind === 'generated').length);
    expect(await page.textContent('#verdict')).toContain(entry.verdict!);
    // The first call's messages were read back from its ids: the task's instruction is among them.
    const first = await page.textContent('#detail .call[data-call="0"] .sent');
    expect(first).toContain('user');
    expect(await page.textContent('#detail .call[data-call="0"]')).toMatch(/fork: first call|reuses call|retry of call/);
    expect(await page.textContent('#detail .facts')).toContain(entry.exit!.code === null ? 'killed' : `code ${entry.exit!.code}`);
  }

  it('lists every rollout of the run, and each filter keeps exactly the rollouts it should', async () => {
    expect(entries.length).toBe(12);
    const page = await open(pathToFileURL(join(runDir, 'report.html')).href);
    expect(await page.getAttribute('body', 'data-charts-drawn')).toBe('14');
    expect(await matching(page)).toBe(entries.length);
    const categories = [...new Set(entries.map((e) => e.category))];
    expect(categories.length).toBe(2);
    const dicts = JSON.parse(await page.textContent('#cg-meta') ?? '{}').dicts as Record<string, string[]>;
    await page.selectOption('#f-category', String(dicts.category!.indexOf(categories[0]!)));
    expect(await matching(page)).toBe(entries.filter((e) => e.category === categories[0]).length);
    await page.selectOption('#f-pass', '1');
    expect(await matching(page)).toBe(entries.filter((e) => e.category === categories[0] && e.pass === true).length);
    await page.selectOption('#f-category', '');
    await page.selectOption('#f-pass', '0');
    expect(await matching(page)).toBe(entries.filter((e) => e.pass === false).length);
    await page.selectOption('#f-pass', '');
    await page.fill('#f-step-min', '2');
    expect(await matching(page)).toBe(entries.filter((e) => e.step >= 2).length);
    await page.fill('#f-reward-min', '0.5');
    expect(await matching(page)).toBe(entries.filter((e) => e.step >= 2 && e.reward !== null && e.reward >= 0.5).length);
    expect((page as Page & { errors?: string[] }).errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('opens a rollout with its calls, its tree with advantages, the verdict and the sandbox exit; screenshots', async () => {
    const page = await open(pathToFileURL(join(runDir, 'report.html')).href);
    await shot(page, 'report-overview');
    const entry = entries.reduce((a, b) => (b.calls > a.calls ? b : a));
    await opensRollout(page, entry);
    await shot(page, 'report-rollout');
    expect((page as Page & { errors?: string[] }).errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('reads the same list and rollouts from data files beside the page, and from clawgym report --serve', async () => {
    const out = join(dir, 'paged', 'report.html');
    const r = spawnSync(process.execPath, [bin, 'report', '--paged', '--out', out, runDir], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(readFileSync(out, 'utf8')).not.toContain('cg-detail-0'); // nothing embedded: the data is in files
    const entry = entries[entries.length - 1]!;
    const paged = await open(pathToFileURL(out).href);
    expect(await matching(paged)).toBe(entries.length);
    await opensRollout(paged, entry);
    await paged.close();
    const server = await serveReport([runDir]);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const served = await open(server.url);
      expect(await matching(served)).toBe(entries.length);
      await opensRollout(served, entry);
      await served.close();
    } finally {
      await server.close();
    }
  }, 90_000);

  it('overlays two runs: every chart has both runs\' series, and the list a run filter', async () => {
    const out = join(dir, 'compare.html');
    const r = spawnSync(process.execPath, [bin, 'report', '--out', out, runDir, runDir], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    const page = await open(pathToFileURL(out).href);
    expect(await matching(page)).toBe(2 * entries.length);
    expect(await page.locator('#chart-reward polyline[data-series="tiny: smoothed"]').count()).toBe(1);
    expect(await page.locator('#chart-reward polyline[data-series="tiny (2): smoothed"]').count()).toBe(1);
    await page.selectOption('#f-run', '1');
    expect(await matching(page)).toBe(entries.length);
    await page.close();
  }, 60_000);
});
