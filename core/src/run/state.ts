import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes } from '../errors';

/**
 * What survives a kill: the last finished step, and how often each step was started; in
 * asynchronous mode also the rollout groups (units) already trained or dropped, and how often
 * each unit was started (a restarted unit gets fresh rollout ids).
 */
export interface RunState {
  step: number;
  stepStarts: Record<string, number>;
  unitsDone?: number[];
  unitStarts?: Record<string, number>;
  /** The units a step trained on, written before its checkpoint: done once the step is (even when the state lagged the checkpoint). */
  pendingUnits?: { step: number; units: number[] };
}

/**
 * A run's `state.json`. Written beside, then renamed over, so a kill mid-write never leaves a
 * truncated state to resume from.
 */
export class RunStateFile {
  private constructor(private readonly path: string, readonly state: RunState) {}

  /**
   * The state of the run in `runDir`: fresh for a new run; the saved one with `resume`. An
   * existing run without `resume`, or one already past `steps`, is a usage error.
   */
  static async open(runDir: string, o: { resume?: boolean; steps: number }): Promise<RunStateFile> {
    const path = join(runDir, 'state.json');
    if (!existsSync(path)) return new RunStateFile(path, { step: 0, stepStarts: {} });
    if (!o.resume) throw new ClawGymError(ErrorCodes.USAGE, `run ${runDir} already exists`, { hint: 'Pass --resume to continue it, or --name to start another.' });
    const state = JSON.parse(await readFile(path, 'utf8')) as RunState;
    if (state.step > o.steps) {
      throw new ClawGymError(ErrorCodes.USAGE, `run ${runDir} has already trained ${state.step} steps, more than run.steps (${o.steps})`, { hint: `Resume with --steps ${state.step} or more, or start another run with --name.` });
    }
    return new RunStateFile(path, state);
  }

  /** Record that `step` starts (again); returns its attempt number, for fresh rollout ids. */
  async startStep(step: number): Promise<number> {
    const attempt = (this.state.stepStarts[step] ?? 0) + 1;
    this.state.stepStarts[step] = attempt;
    await this.save();
    return attempt;
  }

  /**
   * Record the units `step` trains on, before its checkpoint is written: if a kill lands after
   * the checkpoint and before {@link finishStep}, the resumed run (which takes the checkpoint's
   * step as done) counts them as consumed too, so none is trained again.
   */
  async stageUnits(step: number, units: readonly number[]): Promise<void> {
    this.state.pendingUnits = { step, units: [...units] };
    await this.save();
  }

  /** Record that `step` finished (after its checkpoint is written); the units staged for it are consumed. */
  async finishStep(step: number): Promise<void> {
    this.state.step = step;
    const pending = this.state.pendingUnits;
    if (pending && pending.step === step) this.state.unitsDone = [...(this.state.unitsDone ?? []), ...pending.units];
    delete this.state.pendingUnits;
    await this.save();
  }

  /** Record that rollout group `unit` starts (again); returns its attempt number. */
  async startUnit(unit: number): Promise<number> {
    const starts = (this.state.unitStarts ??= {});
    const attempt = (starts[unit] ?? 0) + 1;
    starts[unit] = attempt;
    await this.save();
    return attempt;
  }

  private saving: Promise<void> = Promise.resolve();

  /** Saves one at a time (asynchronous rollout workers start units side by side), each of the newest state. */
  private save(): Promise<void> {
    this.saving = this.saving.catch(() => undefined).then(async () => {
      await writeFile(`${this.path}.tmp`, `${JSON.stringify(this.state)}\n`);
      await rename(`${this.path}.tmp`, this.path);
    });
    return this.saving;
  }
}
