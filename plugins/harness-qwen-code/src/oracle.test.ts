import { ORACLE_VOCABULARY, oracleCallProblems, recordedRequest } from '@clawgym/core/testing';
import { qwenCodeHarness } from './index';

// The tools Qwen Code really offered (recorded from the CLI: core/src/4-proxy/__fixtures__/harness-requests/qwen-code-0.24.4-call1.capture.json):
// a task's oracle, played through it (`clawgym eval --engine oracle`, bench:harness-overhead), calls only those.
describe('Qwen Code harness, the oracle\'s calls against the tools the CLI offers', () => {
  it('maps read_file, write_file, list_files and bash to offered tools with their declared arguments', () => {
    expect(oracleCallProblems(qwenCodeHarness, recordedRequest('qwen-code-0.24.4-call1'))).toEqual([]);
  });

  it('gives its file tools no relative path (Qwen Code 0.24.4 answers "File path must be absolute: out.txt")', () => {
    for (const call of ORACLE_VOCABULARY) {
      const made = qwenCodeHarness.oracleCall!(call);
      const path = made.arguments.file_path;
      if (path !== undefined) expect(String(path)).toMatch(/^\//);
    }
  });

  it('writes and reads through its shell with every value quoted', () => {
    expect(qwenCodeHarness.oracleCall!({ name: 'write_file', arguments: { path: "it's.txt", content: "a'b\n" } }))
      .toEqual({ name: 'run_shell_command', arguments: { command: "printf '%s' 'a'\\''b\n' > 'it'\\''s.txt'" } });
    expect(qwenCodeHarness.oracleCall!({ name: 'read_file', arguments: { path: 'in.txt' } })).toEqual({ name: 'run_shell_command', arguments: { command: "cat -- 'in.txt'" } });
  });
});
