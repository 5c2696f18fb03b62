import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes, type PublishedWeights } from '@clawgym/core';
import { parameterShapes } from './model';
import type { SharedPolicy } from './policy';
import { loadSafetensors, saveSafetensors } from './safetensors';

/** Published versions kept on disk: the newest, and two a replica that lags may still be loading. */
const KEEP = 3;

/**
 * Write the policy's weights as `<dir>/v<version>/` (model.safetensors + config.json), written
 * beside and renamed into place so an engine never reads a half-written folder; older versions
 * beyond the last few are removed. What the embedded trainer publishes after each step.
 */
export async function publishPolicy(policy: SharedPolicy, dir: string): Promise<PublishedWeights> {
  const version = policy.version;
  const final = join(dir, `v${version}`);
  const tmp = `${final}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  const shapes = new Map(parameterShapes(policy.config));
  await saveSafetensors(join(tmp, 'model.safetensors'), [...policy.model.params].map(([name, data]) => ({ name, shape: shapes.get(name)!, data })), { format: 'pt', clawgym: 'embedded-transformer' });
  await writeFile(join(tmp, 'config.json'), `${JSON.stringify({ model: policy.config, policyVersion: version }, null, 2)}\n`);
  await rm(final, { recursive: true, force: true });
  await rename(tmp, final);
  const versions = (await readdir(dir)).map((n) => /^v(\d+)$/.exec(n)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => b - a);
  await Promise.all(versions.slice(KEEP).map((v) => rm(join(dir, `v${v}`), { recursive: true, force: true })));
  return { path: final, version, kind: 'full' };
}

/** Load weights a trainer published (a folder with model.safetensors) into the policy, as `version`. */
export async function loadPolicyWeights(policy: SharedPolicy, weights: PublishedWeights): Promise<void> {
  if (weights.kind !== 'full') {
    throw new ClawGymError(ErrorCodes.CHECKPOINT_MISMATCH, `the embedded engine loads whole weights, not a ${weights.kind} adapter (${weights.path})`, { hint: 'Publish full weights for the embedded engine (its trainer does).' });
  }
  const file = join(weights.path, 'model.safetensors');
  const { tensors } = await loadSafetensors(file).catch((err: unknown) => {
    throw new ClawGymError(ErrorCodes.CHECKPOINT_MISSING, `no weights at ${weights.path} (expected model.safetensors there)`, { cause: err, hint: 'The engine must read the folder the trainer published, at the same path.' });
  });
  // Check every tensor before writing any, so a mismatched folder leaves the served weights whole.
  for (const [name, p] of policy.model.params) {
    const t = tensors.get(name);
    if (!t || t.data.length !== p.length) throw new ClawGymError(ErrorCodes.CHECKPOINT_MISMATCH, `weights ${weights.path} do not fit this model: tensor ${name} ${t ? `has ${t.data.length} values, expected ${p.length}` : 'is missing'}`, { hint: 'Serve the model options the trainer was configured with.' });
  }
  for (const [name, p] of policy.model.params) p.set(tensors.get(name)!.data);
  policy.version = weights.version;
}
