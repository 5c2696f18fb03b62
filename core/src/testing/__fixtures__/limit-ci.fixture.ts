// Run by sandbox-conformance.test.ts in a child jest, with CI=true and without: the limit checks
// of a provider on a machine that cannot enforce pids or cpus, and that does not say how it
// enforces wall. No sandbox is ever made (every check that would run is a skip or a failure,
// but memory, which the fake provider claims and which is checked to be asked for).
import type { SandboxProvider } from '../../contracts/sandbox';
import { describeLimitConformance } from '../sandbox-conformance';

const asked: string[] = [];
const provider: SandboxProvider = {
  name: 'fake',
  describeIsolation: async () => 'none',
  create: async (spec) => { asked.push(JSON.stringify(spec.limits)); throw new Error(`fixture: sandbox asked for with ${JSON.stringify(spec.limits)}`); },
  sweep: async () => ({ removed: [] }),
};

describeLimitConformance('fake', async () => ({ provider, socketPath: '/nonexistent.sock', url: 'http://127.0.0.1:9' }), {
  limits: { pids: 'not enforced: the fixture machine has no pids controller', memory: 'a claimed memory limit', cpus: 'not enforced: the fixture machine has no cpu controller' },
});
