import { oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { codexHarness } from './index';

// The tools Codex really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/codex-0.171.0-call1.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('Codex harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments', () => {
    expect(oracleCallProblems(codexHarness, recordedRequest('codex-0.171.0-call1'))).toEqual([]);
  });
});
