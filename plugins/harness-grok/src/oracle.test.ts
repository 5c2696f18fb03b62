import { oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { grokHarness } from './index';

// The tools Grok CLI really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/grok-0.0.34-main.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('Grok CLI harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments', () => {
    expect(oracleCallProblems(grokHarness, recordedRequest('grok-0.0.34-main'))).toEqual([]);
  });
});
