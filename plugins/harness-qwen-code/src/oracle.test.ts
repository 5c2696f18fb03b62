import { oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { qwenCodeHarness } from './index';

// The tools Qwen Code really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/qwen-code-0.24.4-call1.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('Qwen Code harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments', () => {
    expect(oracleCallProblems(qwenCodeHarness, recordedRequest('qwen-code-0.24.4-call1'))).toEqual([]);
  });
});
