import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCodes } from '../errors';
import { RunStateFile } from './state';

const dirs: string[] = [];
const tmp = () => { const d = mkdtempSync(join(tmpdir(), 'clawgym-state-')); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

describe('run state', () => {
  it('counts the starts of each step, keeps the last finished one, and reads both back on resume', async () => {
    const dir = tmp();
    const state = await RunStateFile.open(dir, { steps: 3 });
    expect(state.state).toEqual({ step: 0, stepStarts: {} });
    expect(await state.startStep(1)).toBe(1);
    await state.finishStep(1);
    expect(await state.startStep(2)).toBe(1);
    // A kill here: step 2 started, not finished. Resumed, it starts a second time.
    const resumed = await RunStateFile.open(dir, { resume: true, steps: 3 });
    expect(resumed.state).toEqual({ step: 1, stepStarts: { 1: 1, 2: 1 } });
    expect(await resumed.startStep(2)).toBe(2);
    expect(JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'))).toEqual({ step: 1, stepStarts: { 1: 1, 2: 2 } });
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('refuses an existing run without resume, and one already past the steps asked for', async () => {
    const dir = tmp();
    const state = await RunStateFile.open(dir, { steps: 2 });
    await state.startStep(1); await state.finishStep(1); await state.startStep(2); await state.finishStep(2);
    await expect(RunStateFile.open(dir, { steps: 2 })).rejects.toMatchObject({ code: ErrorCodes.USAGE, hint: expect.stringContaining('--resume') });
    await expect(RunStateFile.open(dir, { resume: true, steps: 1 })).rejects.toMatchObject({ message: expect.stringContaining('has already trained 2 steps, more than run.steps (1)') });
  });

  it('asynchronous mode: the units a step staged are consumed with it, even when the state lagged its checkpoint', async () => {
    const dir = tmp();
    const state = await RunStateFile.open(dir, { steps: 4 });
    expect(await state.startUnit(0)).toBe(1);
    await state.stageUnits(1, [0, 2]);
    await state.finishStep(1);
    expect(state.state.unitsDone).toEqual([0, 2]);
    // Step 2 staged its units and its checkpoint landed, then a kill before its state: the
    // resumed run takes the checkpoint's step as done (train.ts), and its units with it.
    await state.stageUnits(2, [1, 3]);
    const resumed = await RunStateFile.open(dir, { resume: true, steps: 4 });
    await resumed.finishStep(2);
    expect(resumed.state.unitsDone).toEqual([0, 2, 1, 3]);
    // A step killed before its checkpoint: staged, never finished; redone, it stages anew.
    await resumed.stageUnits(3, [4]);
    const again = await RunStateFile.open(dir, { resume: true, steps: 4 });
    await again.stageUnits(3, [5]);
    await again.finishStep(3);
    expect(again.state.unitsDone).toEqual([0, 2, 1, 3, 5]);
    expect(again.state.pendingUnits).toBeUndefined();
    expect(await again.startUnit(0)).toBe(2);
  });
});
