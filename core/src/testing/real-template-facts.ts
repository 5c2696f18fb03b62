import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChatModel } from '../model/load';
import { titoStats } from '../rollout/tito-stats';
import type { ModelCallRecord } from '../contracts/records';

/**
 * What a rollout's records say about the real template it ran under (for the e2e tests that run
 * a CLI with a real model's tokenizer and template): whether every prompt opens with the
 * template's first control token and every reply ends with a stop id, whether the first prompt is
 * exactly the template's render of it, and how many calls drifted which way.
 */
export function realTemplateFacts(records: readonly ModelCallRecord[], model: ChatModel, opener: string) {
  const open = model.tokenizer.tokenId(opener);
  const stops = new Set(model.chatTemplate.stopIds);
  const drift: Record<string, number> = {};
  for (const r of records) drift[r.drift?.class ?? 'none'] = (drift[r.drift?.class ?? 'none'] ?? 0) + 1;
  return {
    promptsOpenWithControl: open !== undefined && records.every((r) => r.promptIds[0] === open),
    repliesEndWithStop: records.every((r) => r.finishReason === 'error' || stops.has(r.outputIds[r.outputIds.length - 1]!)),
    /** Decoding a prompt and re-encoding it as markup gives the same ids (they are the tokenizer's, not bytes). */
    promptsAreTokenizerIds: records.every((r) => {
      const again = model.tokenizer.encodeMarkup(model.tokenizer.decode(r.promptIds));
      return again.length === r.promptIds.length && again.every((id, i) => id === r.promptIds[i]);
    }),
    drift,
  };
}

/**
 * The checks every harness's real-template e2e test makes of its rollout: the harness exited 0
 * having written `hello.txt` with `hi`, every prompt and reply is the model's own ids (see
 * {@link realTemplateFacts}), call 0 answered with a tool call (`toolCallToken`), and TITO reuse
 * is whole with no fork. Returns the facts, for the checks a test adds of its own.
 */
export async function expectRealTemplateRollout(
  run: { result: { exitCode: number | null; timedOut: boolean }; records: readonly ModelCallRecord[]; sandbox: { workspaceHostPath: string } },
  model: ChatModel,
  o: { opener: string; toolCallToken: string },
): Promise<ReturnType<typeof realTemplateFacts>> {
  expect(run.result).toMatchObject({ exitCode: 0, timedOut: false });
  expect(await readFile(join(run.sandbox.workspaceHostPath, 'hello.txt'), 'utf8')).toBe('hi');
  const facts = realTemplateFacts(run.records, model, o.opener);
  expect(facts).toMatchObject({ promptsOpenWithControl: true, repliesEndWithStop: true, promptsAreTokenizerIds: true });
  expect(run.records[0]!.outputIds).toContain(model.tokenizer.tokenId(o.toolCallToken));
  const tito = titoStats(run.records);
  expect(tito.forkReasons).toEqual([]);
  expect(tito.rate).toBe(1);
  return facts;
}
