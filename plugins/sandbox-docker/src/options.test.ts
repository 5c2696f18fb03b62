/** The sandbox slot's options configure the Docker provider (no daemon needed: nothing is created). */
import { resolve } from 'node:path';
import { provider, resolveConfig, type ClawGymConfig } from '@clawgym/core';
import { createKernel } from '../../../core/src/run/create-kernel';
import type { DockerSandboxProvider } from './provider';

const repo = resolve(__dirname, '../../..');

it("sandbox: { use: 'docker', options } reaches the provider the plugin makes", async () => {
  const config = resolveConfig({ sandbox: { use: 'docker', options: { image: 'my-tasks:7', user: '1234', warmPool: 0 } } } as ClawGymConfig, { rootDir: repo });
  const kernel = await createKernel(config);
  try {
    const p = await provider(kernel, 'sandbox', config.sandbox);
    // The plugin loads from its package (its built copy), so compare by what it is, not by class.
    expect(p.name).toBe('docker');
    expect((p as DockerSandboxProvider).image).toBe('my-tasks:7');
    expect(await p.describeIsolation()).toContain('user 1234:1234');
  } finally {
    await kernel.dispose();
  }
});

it('a misspelled option is refused with its path', async () => {
  const config = resolveConfig({ sandbox: { use: 'docker', options: { imgae: 'x' } } } as ClawGymConfig, { rootDir: repo });
  const kernel = await createKernel(config);
  try {
    await expect(provider(kernel, 'sandbox', config.sandbox)).rejects.toThrow(/imgae/);
  } finally {
    await kernel.dispose();
  }
});

it('hosts reach the provider, and a misspelled host field is refused with its path', async () => {
  const config = resolveConfig({ sandbox: { use: 'docker', options: { hosts: ['tcp://10.0.0.2:2375', { url: 'tcp://10.0.0.3:2375', maxSandboxes: 4 }], warmPool: 0 } } } as ClawGymConfig, { rootDir: repo });
  const kernel = await createKernel(config);
  try {
    const p = await provider(kernel, 'sandbox', config.sandbox) as DockerSandboxProvider;
    expect(p.hosts.list.map((h) => [h.url, h.local])).toEqual([['tcp://10.0.0.2:2375', false], ['tcp://10.0.0.3:2375', false]]);
  } finally {
    await kernel.dispose();
  }
  const bad = resolveConfig({ sandbox: { use: 'docker', options: { hosts: [{ url: 'tcp://10.0.0.3:2375', maxSandbox: 4 }] } } } as ClawGymConfig, { rootDir: repo });
  const k2 = await createKernel(bad);
  try {
    await expect(provider(k2, 'sandbox', bad.sandbox)).rejects.toThrow(/maxSandbox/);
  } finally {
    await k2.dispose();
  }
});
