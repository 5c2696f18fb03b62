import { loadConfigOrDefaults } from '../../config/load';
import { ClawGymError, ErrorCodes } from '../../errors';
import { doctor } from '../../doctor/doctor';
import { formatTable } from './plugins';

/**
 * `clawgym doctor`: for the current config (or the defaults when there is none), what is
 * installed, what is missing and the commands that install it. Fails (exit 1) when something is
 * missing, so scripts can gate on it.
 */
export async function doctorCommand(opts: { config?: string; json?: boolean }, io: { out: (s: string) => void; cwd: string }): Promise<void> {
  const config = loadConfigOrDefaults({ cwd: io.cwd, configFile: opts.config });
  const rows = await doctor(config);
  const missing = rows.filter((r) => r.status === 'missing');
  if (opts.json) io.out(`${JSON.stringify(rows, null, 2)}\n`);
  else {
    io.out(`${formatTable(['STATUS', 'WHAT', 'DETAIL'], rows.map((r) => [r.status, r.what, r.detail]))}\n`);
    const installs = [...new Set(missing.flatMap((r) => (r.install ? [r.install] : [])))];
    if (installs.length) io.out(`\nTo install what is missing:\n${installs.map((c) => `  ${c}`).join('\n')}\n`);
  }
  if (missing.length) {
    throw new ClawGymError(ErrorCodes.DOCTOR_MISSING, `${missing.length} thing(s) the config needs are missing: ${missing.map((r) => r.what).join(', ')}`, { hint: 'Run the install commands above, then clawgym doctor again.' });
  }
}
