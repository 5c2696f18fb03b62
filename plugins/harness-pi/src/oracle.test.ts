import { oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { piHarness } from './index';

// The tools Pi really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/pi-0.73.1-main.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('Pi harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments', () => {
    expect(oracleCallProblems(piHarness, recordedRequest('pi-0.73.1-main'))).toEqual([]);
  });
});
