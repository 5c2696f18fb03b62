import { oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { claudeCodeHarness } from './index';

// The tools Claude Code really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/claude-code-2.1.332-main.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('Claude Code harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments', () => {
    expect(oracleCallProblems(claudeCodeHarness, recordedRequest('claude-code-2.1.332-main'))).toEqual([]);
  });
});
