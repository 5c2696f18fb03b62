/**
 * A Harbor task folder for the Docker tests: its environment/Dockerfile builds on a base image
 * (the project's, built locally: there is no registry here), puts seed.txt in /app and sets
 * $MAGIC; the oracle (bash syntax on purpose) and the verifier need both, so they pass only in
 * the task's own image.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SOLVE = `#!/bin/bash
# bash syntax on purpose; seed.txt and $MAGIC exist only in the task's image
parts=(seed.txt data.txt)
[[ -f \${parts[0]} ]] || { echo "no \${parts[0]} here" >&2; exit 1; }
cat "\${parts[@]}" > out.txt
echo "$MAGIC" >> out.txt
`;
const TEST = `#!/bin/bash
mkdir -p /logs/verifier
if [[ "$(cat out.txt 2>/dev/null)" == $'42\\nhello\\nfrom-the-dockerfile' && "$MAGIC" == from-the-dockerfile ]]; then
  echo PASS; echo 1 > /logs/verifier/reward.txt
else
  echo "FAIL: out.txt=$(cat out.txt 2>&1) MAGIC=$MAGIC"; echo 0 > /logs/verifier/reward.txt
fi
`;

/** A Harbor task folder `root/name` whose Dockerfile builds on `base` (plus `dockerfileExtra`). */
export function makeHarborTask(root: string, name: string, base: string, dockerfileExtra = ''): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'environment'), { recursive: true });
  mkdirSync(join(dir, 'solution'));
  mkdirSync(join(dir, 'tests'));
  writeFileSync(join(dir, 'instruction.md'), 'Concatenate seed.txt and data.txt into out.txt, then append $MAGIC.\n');
  writeFileSync(join(dir, 'task.toml'), '[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 30\n[environment]\ncpus = 1\nmemory_mb = 256\nbuild_timeout_sec = 120\n');
  writeFileSync(join(dir, 'environment', 'data.txt'), 'hello\n');
  writeFileSync(join(dir, 'environment', 'Dockerfile'), [
    `FROM ${base}`, 'USER 0:0', 'RUN mkdir -p /app && echo 42 > /app/seed.txt', 'COPY data.txt /app/data.txt',
    'ENV MAGIC=from-the-dockerfile', 'WORKDIR /app', dockerfileExtra, 'USER 1000:1000', '',
  ].join('\n'));
  writeFileSync(join(dir, 'solution', 'solve.sh'), SOLVE);
  writeFileSync(join(dir, 'tests', 'test.sh'), TEST);
  return dir;
}
