import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWireRequest } from '../../4-proxy/wire';
import { recordedRequest } from '../../testing';
import { fingerprintChanges, fingerprintOf, fingerprintSource, type FingerprintSource } from './fingerprint';
import { FingerprintWatch, readFingerprints } from './watch';

// Requests recorded from OpenCode 1.18.33 in two rollouts (their own workspace each, see the fixtures' README.md).
const source = (name: string) => fingerprintSource(parseWireRequest('openai-chat', recordedRequest(name).body).conversation);
/** The rollout's sandbox root (OpenCode names a folder under HOME in its bash tool), as the runner passes the sandbox's paths. */
const rootOf = (s: FingerprintSource) => /\/tmp\/clawgym-e2e-[^/\s]+/.exec(JSON.stringify(s))![0];
const print = (s: FingerprintSource, cliVersion = '1.18.33') => fingerprintOf(s, 'opencode', { cliVersion, paths: [rootOf(s)] });

const main = source('opencode-1.18.33-main');
const other = source('opencode-1.18.33-after-compaction');

describe('harness fingerprints, from recorded requests', () => {
  it('two rollouts of one release have the same fingerprint: their workspace paths and dates are masked', () => {
    expect(rootOf(main)).not.toBe(rootOf(other));
    // Unmasked, the two would differ (the path in a tool's description).
    expect(fingerprintOf(main, 'opencode')).not.toEqual(fingerprintOf(other, 'opencode'));
    expect(print(main)).toEqual(print(other));
    expect(Object.keys(print(main).tools)).toEqual(['bash', 'edit', 'glob', 'grep', 'read', 'skill', 'task', 'todowrite', 'webfetch', 'write']);
  });

  it('another day is the same fingerprint (OpenCode puts the date in its system prompt)', () => {
    expect(main.system).toContain("Today's date: Sun Dec 06 2026");
    expect(print({ ...main, system: main.system.replace('Sun Dec 06 2026', 'Mon Dec 07 2026') })).toEqual(print(main));
  });

  it("Claude Code's per-task billing hash is not a change; its version is", () => {
    // Recorded from Claude Code 2.1.332: the billing line's last part is a hash of the task's prompt
    // (4e6 here; 949 and b09 for two ClawGym-Task tasks), the same CLI sending another per task.
    const cc = fingerprintSource(parseWireRequest('anthropic-messages', recordedRequest('claude-code-2.1.332-main').body).conversation);
    expect(cc.system).toContain('x-anthropic-billing-header: cc_version=2.1.332.4e6;');
    const ccPrint = (s: FingerprintSource) => fingerprintOf(s, 'claude-code', { cliVersion: '2.1.332' });
    expect(ccPrint({ ...cc, system: cc.system.replace('cc_version=2.1.332.4e6', 'cc_version=2.1.332.949') })).toEqual(ccPrint(cc));
    expect(fingerprintChanges(ccPrint(cc), ccPrint({ ...cc, system: cc.system.replace('cc_version=2.1.332.4e6', 'cc_version=2.1.333.4e6') })))
      .toEqual([expect.stringMatching(/^system prompt changed/)]);
  });

  it('a changed system prompt is named', () => {
    const changed = { ...main, system: main.system.replace('You are opencode', 'You are OpenCode') };
    expect(fingerprintChanges(print(main), print(changed))).toEqual([expect.stringMatching(/^system prompt changed \(\w{16} → \w{16}\)$/)]);
  });

  it('a changed tool schema is named by tool, and so are tools added and removed, and the CLI version', () => {
    const tools = main.tools.map((t) => (t.name === 'write'
      ? { ...t, parameters: { ...t.parameters, properties: { ...(t.parameters.properties as object), mode: { type: 'string' } } } } : t));
    expect(fingerprintChanges(print(main), print({ ...main, tools }))).toEqual(['tool schemas changed: write']);
    const fewer = { ...main, tools: [...main.tools.filter((t) => t.name !== 'webfetch'), { name: 'websearch', parameters: {} }] };
    expect(fingerprintChanges(print(main), print(fewer, '1.19.0'))).toEqual(['CLI version 1.18.33 → 1.19.0', 'tools added: websearch', 'tools removed: webfetch']);
  });
});

describe('FingerprintWatch', () => {
  const dirs: string[] = [];
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
  const runDir = () => { const d = mkdtempSync(join(tmpdir(), 'clawgym-fp-')); dirs.push(d); return d; };

  it('pins the first fingerprint, stays quiet while it holds, and warns once, naming the change, when the system prompt differs', async () => {
    const dir = runDir();
    const warnings: string[] = [];
    const watch = new FingerprintWatch(dir, (m) => warnings.push(m));
    await watch.observe([print(main), print(other)], 'step 1');
    await watch.observe([print(other)], 'step 2');
    expect(warnings).toEqual([]);
    const changed = print({ ...main, system: `${main.system}\nAlways answer in French.` });
    await watch.observe([changed], 'step 3');
    await watch.observe([changed], 'step 4');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^harness opencode: what it sends the model differs from the run's pinned fingerprint \(step 3\): system prompt changed/);
    expect((await readFingerprints(dir)).pinned.opencode).toEqual(print(main));
  });

  it('a later run into the same folder (the same config again) compares with the pinned fingerprint: a changed tool schema is named', async () => {
    const dir = runDir();
    await new FingerprintWatch(dir, () => undefined).observe([print(main)], 'step 1');
    const warnings: string[] = [];
    const tools = main.tools.map((t) => (t.name === 'bash' ? { ...t, description: `${t.description ?? ''} Use it sparingly.` } : t));
    await new FingerprintWatch(dir, (m) => warnings.push(m)).observe([print({ ...main, tools }, '1.19.0')], 'step 1');
    expect(warnings).toEqual([expect.stringContaining("differs from the run's pinned fingerprint (step 1): CLI version 1.18.33 → 1.19.0; tool schemas changed: bash")]);
  });
});
