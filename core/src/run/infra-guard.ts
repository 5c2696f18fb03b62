import { ClawGymError, ErrorCodes } from '../errors';
import type { RolloutResult } from '../contracts/hooks';
import { faultError, type RolloutFault } from '../6-rollout/verifier-bug';

type Report = Pick<RolloutResult, 'outcome' | 'details' | 'request'> & { fault?: RolloutFault };

/** A plugin's bug among the failures stops the run as itself (with its stack), not as the machine's. */
function refuseFault(reports: readonly Report[]): void {
  const fault = reports.find((r) => r.outcome === 'infra-error' && r.fault)?.fault;
  if (fault) throw faultError(fault);
}

const allInfra = (reports: readonly Pick<RolloutResult, 'outcome'>[]) => reports.length > 0 && reports.every((r) => r.outcome === 'infra-error');

/** The first infrastructure failure's message, as the error that stops the run quotes it. */
function firstFailure(reports: readonly Pick<RolloutResult, 'outcome' | 'details' | 'request'>[]): string {
  const first = reports.find((r) => r.outcome === 'infra-error');
  return first ? `${first.request.harness} on ${first.request.taskId}: ${first.details}` : 'no rollout';
}

const hint = 'Infrastructure failures are the machine\'s, not the agent\'s: `clawgym doctor` says what the config needs, and the run\'s call records and sandbox logs say more. Fix it, then run again (`clawgym run --resume` continues a run).';

/**
 * Stops a run whose steps train on nothing: `limit` steps in a row where every rollout failed
 * for infrastructure reasons (0: never stop). A step with one scored rollout resets the count.
 */
export class InfraGuard {
  private streak = 0;
  private first = '';

  constructor(private readonly limit: number) {}

  /** After each step: throws {@link ErrorCodes.INFRA_FAILURES} when the limit is reached. */
  step(step: number, reports: readonly Report[]): void {
    if (!allInfra(reports)) { this.streak = 0; return; }
    if (this.limit > 0) refuseFault(reports);
    if (this.streak++ === 0) this.first = firstFailure(reports);
    if (this.limit > 0 && this.streak >= this.limit) {
      throw new ClawGymError(ErrorCodes.INFRA_FAILURES,
        `every rollout of the last ${this.streak} step(s) (up to step ${step}) failed for infrastructure reasons (run.maxInfraSteps is ${this.limit}); the first: ${this.first}`, { hint });
    }
  }
}

/** An evaluation (`what`) in which every rollout was an infrastructure failure measured nothing: stop. */
export function refuseAllInfraEval(what: string, reports: readonly Report[]): void {
  if (!allInfra(reports)) return;
  refuseFault(reports);
  throw new ClawGymError(ErrorCodes.INFRA_FAILURES,
    `${what} measured nothing: all ${reports.length} rollouts failed for infrastructure reasons; the first: ${firstFailure(reports)}`, { hint });
}
