import type { ResolvedConfig } from '../config/schema';
import { ClawGymError, ErrorCodes } from '../errors';
import { doctor, type DoctorOptions } from './doctor';

/**
 * Before `run`, `eval` or `sft` start anything: the doctor's own checks for what the config
 * needs. A run that cannot work (no bubblewrap for the local sandbox, a harness CLI or plugin
 * not installed) stops here within seconds, naming what is missing and the command that installs
 * it, instead of running every step as infrastructure failures.
 */
export async function preflight(config: ResolvedConfig, command: string, options: DoctorOptions = {}): Promise<void> {
  const missing = (await doctor(config, options)).filter((r) => r.status === 'missing');
  if (!missing.length) return;
  const installs = [...new Set(missing.flatMap((r) => (r.install ? [r.install] : [])))];
  throw new ClawGymError(ErrorCodes.PREFLIGHT_FAILED,
    `clawgym ${command} cannot work on this machine; missing:\n${missing.map((r) => `  - ${r.what}: ${r.detail}`).join('\n')}`,
    { hint: `${installs.length ? `Install with:\n${installs.map((c) => `  ${c}`).join('\n')}\nor let \`clawgym doctor --fix\` run ${installs.length > 1 ? 'them' : 'it'}` : 'See `clawgym doctor`'}, then run \`clawgym ${command}\` again.` });
}
