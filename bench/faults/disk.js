'use strict';
// bench:faults case on a sandbox's disk: a command that writes far past the sandbox's disk limit
// (in its workspace, HOME and /tmp) must get ENOSPC inside, leave the host's disk as it was, and
// leave nothing mounted once the sandbox is destroyed (or its runner is gone and it is swept).
const { readFileSync, statfsSync, statSync, mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const MiB = 1024 * 1024;
const LIMIT_MIB = 64;
const ASKED_MIB = 1024;
const freeBytes = (dir) => { const s = statfsSync(dir); return s.bavail * s.bsize; };
const mountsUnder = (dir) => readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '').filter((p) => p.startsWith(`${dir}/`));

module.exports = async function diskCases({ core, tally, log, socketPath, url }) {
  log(`disk: ${ASKED_MIB} MiB written in a sandbox limited to ${LIMIT_MIB} MiB (workspace, HOME, /tmp; holder and one bubblewrap per command)`);
  for (const holder of [true, false]) {
    const root = mkdtempSync(join(tmpdir(), 'bench-faults-disk-'));
    const provider = core.localSandboxProvider({ root, holder, diskLimit: `${LIMIT_MIB}m`, log: () => {} });
    const how = (await provider.limitEnforcement()).disk;
    const before = freeBytes(root);
    let escapes = 0;
    try {
      const sb = await provider.create({ runId: 'bench-faults', rolloutId: `disk-${holder}`, limits: { wallMs: 60_000 }, modelEndpoint: { socketPath, url } });
      const targets = ['big.bin', '$HOME/tmp/big.bin', '/tmp/big.bin'];
      const script = targets.map((t) => `head -c ${ASKED_MIB}M /dev/zero > ${t}; echo "$?"; rm -f ${t}`).join('; ');
      const r = await sb.exec(['sh', '-c', `head -c ${ASKED_MIB}M /dev/zero > keep.bin; echo "$?"; ${script}`]);
      const codes = r.stdout.trim().split('\n');
      const enospc = (r.stderr.match(/No space left on device/g) ?? []).length;
      const kept = statSync(join(sb.workspaceHostPath, 'keep.bin')).size;
      const used = before - freeBytes(root);
      escapes += codes.filter((c) => c === '0').length + (enospc < 4 ? 1 : 0) + (kept > LIMIT_MIB * MiB ? 1 : 0) + (used > (ASKED_MIB / 4) * MiB ? 1 : 0);
      log(`    ${holder ? 'holder' : 'per command'}: exits [${codes.join(',')}], ${enospc} ENOSPC, kept ${(kept / MiB).toFixed(0)} MiB in the workspace, host disk -${Math.max(0, used / MiB).toFixed(0)} MiB (${how})`);
      await sb.destroy();
      await provider.close();
      escapes += mountsUnder(root).length;
    } catch (e) {
      log(`    ${holder ? 'holder' : 'per command'}: ${e.message}`);
      escapes++;
      await provider.close();
    }
    rmSync(root, { recursive: true, force: true });
    tally(`a sandbox writing past its disk limit (${holder ? 'holder' : 'one bubblewrap per command'}): ENOSPC inside, host untouched, nothing left mounted`, { disk_escapes: escapes });
  }
};
