import { join } from 'node:path';
import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { grokHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('grok');
const options = () => ('bin' in cli ? { bin: cli.bin, node: cli.node } : {});

describeIf(missing, 'real Grok CLI through the proxy (e2e, OpenAI Chat)', () => {
  it('writes the file the script asks for with its own tool; every later main call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: grokHarness,
      rolloutId: 'grok',
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { text: 'Writing the file.', toolCalls: [{ name: 'create_file', arguments: { path: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', mainCalls: 2, sideRoles: {} });
    } finally {
      await run.close();
    }
  }, 180_000);
});
