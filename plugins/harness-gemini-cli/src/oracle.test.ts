import { oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { geminiCliHarness } from './index';

// The tools Gemini CLI really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/gemini-cli-0.61.0-main.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('Gemini CLI harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments', () => {
    expect(oracleCallProblems(geminiCliHarness, recordedRequest('gemini-cli-0.61.0-main'))).toEqual([]);
  });
});
