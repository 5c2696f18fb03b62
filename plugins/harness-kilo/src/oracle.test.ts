import { oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { kiloHarness } from './index';

// The tools Kilo Code really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/kilo-7.7.7-main.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('Kilo Code harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments', () => {
    expect(oracleCallProblems(kiloHarness, recordedRequest('kilo-7.7.7-main'))).toEqual([]);
  });
});
