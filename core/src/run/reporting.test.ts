import type { MetricsEvent, Reporter } from '../contracts/reporter';
import { ErrorCodes } from '../errors';
import { Reporting } from './reporting';

const event = (step: number): MetricsEvent => ({ kind: 'step', step, time: step, values: { reward: step / 10 } });
const run = { runId: 'r', runDir: '/tmp/clawgym-reporting' };

describe('reporters of a run', () => {
  it('gives every event to every reporter, in order, each awaited before the next', async () => {
    const seen: string[] = [];
    const slow: Reporter = { name: 'slow', onMetrics: async (e) => { await new Promise((r) => setTimeout(r, 5)); seen.push(`slow@${e.step}`); } };
    const fast: Reporter = { name: 'fast', onMetrics: (e, r) => { seen.push(`fast@${e.step}:${r.runId}`); } };
    const reporting = new Reporting([slow, { name: 'render-only', render: async () => 'x' }, fast], run);
    for (const s of [1, 2]) await reporting.emit(event(s));
    expect(seen).toEqual(['slow@1', 'fast@1:r', 'slow@2', 'fast@2:r']);
  });

  it('fails the run with the reporter\'s name when it fails on an event; a failed render only warns', async () => {
    const warnings: string[] = [];
    const broken: Reporter = { name: 'broken', onMetrics: () => { throw new Error('disk full'); }, render: async () => { throw new Error('no ink'); } };
    const reporting = new Reporting([broken, { name: 'ok', render: async (d) => `${d}/ok.txt` }], run, { info: () => {}, warn: (m) => warnings.push(m) });
    await expect(reporting.emit(event(3))).rejects.toMatchObject({ code: ErrorCodes.REPORTER_FAILED, message: 'reporter "broken" failed on the step event of step 3: disk full' });
    expect(await reporting.render()).toEqual({ ok: '/tmp/clawgym-reporting/ok.txt' });
    expect(warnings).toEqual(['reporter "broken" could not render /tmp/clawgym-reporting: no ink']);
  });
});
