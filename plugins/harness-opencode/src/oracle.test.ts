import { oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { openCodeHarness } from './index';

// The tools OpenCode really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/opencode-1.18.33-main.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('OpenCode harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments', () => {
    expect(oracleCallProblems(openCodeHarness, recordedRequest('opencode-1.18.33-main'))).toEqual([]);
  });
});
