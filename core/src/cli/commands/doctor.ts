import { loadConfigOrDefaults } from '../../config/load';
import { ClawGymError, ErrorCodes } from '../../errors';
import { doctor, type DoctorRow } from '../../doctor/doctor';
import { runFixes } from '../../doctor/fix';
import { formatTable } from './plugins';

const installsOf = (rows: readonly DoctorRow[]) => [...new Set(rows.flatMap((r) => (r.status === 'missing' && r.install ? [r.install] : [])))];

/**
 * `clawgym doctor`: for the current config (or the defaults when there is none), what is
 * installed, what is missing and the commands that install it. Fails (exit 1) when something is
 * missing, so scripts can gate on it. With `--fix` it runs those commands (system packages only
 * as root; otherwise it prints the `sudo` line and stops) and checks again.
 */
export async function doctorCommand(opts: { config?: string; json?: boolean; fix?: boolean }, io: { out: (s: string) => void; err: (s: string) => void; cwd: string }): Promise<void> {
  const config = loadConfigOrDefaults({ cwd: io.cwd, configFile: opts.config });
  let rows = await doctor(config);
  if (opts.fix && installsOf(rows).length) {
    const steps = runFixes(installsOf(rows), { cwd: config.rootDir, log: io.err });
    const manual = steps.filter((s) => s.result === 'manual');
    const failed = steps.filter((s) => s.result === 'failed');
    if (manual.length) {
      throw new ClawGymError(ErrorCodes.DOCTOR_MISSING, `system packages are missing and this is not root: type\n${manual.map((s) => `  ${s.detail}`).join('\n')}`, { hint: 'then run the same command again.' });
    }
    for (const f of failed) io.err(`failed (${f.detail}): ${f.command}\n`);
    rows = await doctor(config);
  }
  const missing = rows.filter((r) => r.status === 'missing');
  if (opts.json) io.out(`${JSON.stringify(rows, null, 2)}\n`);
  else {
    io.out(`${formatTable(['STATUS', 'WHAT', 'DETAIL'], rows.map((r) => [r.status, r.what, r.detail]))}\n`);
    const installs = installsOf(rows);
    if (installs.length) io.out(`\nTo install what is missing${opts.fix ? ' (--fix could not)' : ' (or run clawgym doctor --fix)'}:\n${installs.map((c) => `  ${c}`).join('\n')}\n`);
  }
  if (missing.length) {
    throw new ClawGymError(ErrorCodes.DOCTOR_MISSING, `${missing.length} thing(s) the config needs are missing: ${missing.map((r) => r.what).join(', ')}`, {
      hint: installsOf(rows).length ? 'Run the install commands above, then clawgym doctor again.' : 'Each row marked missing says what is wrong; fix it, then clawgym doctor again.',
    });
  }
}
