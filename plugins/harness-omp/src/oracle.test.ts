import { oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { ompHarness } from './index';

// The tools oh-my-pi really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/omp-18.2.3-main.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('oh-my-pi harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments (each requires an intent, `i`)', () => {
    expect(oracleCallProblems(ompHarness, recordedRequest('omp-18.2.3-main'))).toEqual([]);
  });
});
