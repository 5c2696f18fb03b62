import { oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { openClawHarness } from './index';

// The tools OpenClaw really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/openclaw-2026.9.6-call1.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('OpenClaw harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments', () => {
    expect(oracleCallProblems(openClawHarness, recordedRequest('openclaw-2026.9.6-call1'))).toEqual([]);
  });
});
