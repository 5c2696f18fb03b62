import { randomBytes } from 'node:crypto';
import type { OracleTurn } from '@clawgym/core';

/**
 * A reference script (Harbor's `solve.sh`) as a task oracle: one turn with one `bash` tool call
 * (`{ command }`), which the oracle engine plays through the agentloop harness from the
 * workspace. Tool calls named `bash` may run under `/bin/sh` (agentloop's does: dash on
 * Debian), and solve.sh scripts are bash (`[[ ]]`, arrays, `$'…'`), so the command hands the
 * script to `bash -c` as one argument, read from a quoted here-document (no expansion) whose
 * delimiter no line of the script can match. The script's stdin stays the tool's own.
 */
export function bashOracle(script: string): OracleTurn[] {
  let tag = 'CLAWGYM_SOLVE';
  while (script.split('\n').includes(tag)) tag = `CLAWGYM_SOLVE_${randomBytes(4).toString('hex')}`;
  const body = script.endsWith('\n') ? script : `${script}\n`;
  return [{ toolCalls: [{ name: 'bash', arguments: { command: `bash -c "$(cat <<'${tag}'\n${body}${tag}\n)"` } }] }];
}
