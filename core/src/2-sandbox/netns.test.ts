import { rm } from 'node:fs/promises';
import { describeIf } from '../testing';
import { createNetnsSandbox, netnsAvailable } from './netns';

const ns = netnsAvailable();

describeIf(ns.ok ? undefined : ns.reason, 'the network-namespace sandbox (the harness e2e tests\' own)', () => {
  it('a command starts in the workspace, and its PWD says so (not the runner\'s folder)', async () => {
    const sb = await createNetnsSandbox({ runId: 'netns-test', rolloutId: `pwd-${process.pid}`, limits: {}, modelEndpoint: { socketPath: '/nonexistent.sock', url: 'http://unused' } });
    try {
      const r = await sb.exec([process.execPath, '-e', 'console.log(process.cwd()); console.log(process.env.PWD)']);
      expect(r.stdout.trim().split('\n')).toEqual([sb.workspacePath, sb.workspacePath]);
      expect(process.cwd()).not.toBe(sb.workspacePath);
    } finally {
      await sb.destroy();
      await rm(sb.workspaceHostPath, { recursive: true, force: true }).catch(() => undefined);
    }
  }, 30_000);
});
