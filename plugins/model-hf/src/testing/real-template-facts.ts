import type { ChatModel } from '../load';
import { expectHarnessRollout, type E2eRun, type RolloutExpectation } from '@clawgym/core/testing';
import { isSideCall, type ModelCallRecord } from '@clawgym/core';

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
 * The checks every harness's real-template e2e test makes of its rollout: those of
 * {@link expectHarnessRollout} (exit 0, `hello.txt` with `hi`, whole TITO reuse with no fork),
 * every prompt and reply is the model's own ids (see {@link realTemplateFacts}), the first main
 * call answered with a tool call (`toolCallToken`), no later main call's drift a fork. Returns the facts (the drift classes among them), for the
 * checks a test adds of its own.
 */
export async function expectRealTemplateRollout(
  run: E2eRun,
  model: ChatModel,
  o: { opener: string; toolCallToken: string } & RolloutExpectation,
): Promise<ReturnType<typeof realTemplateFacts>> {
  const { opener, toolCallToken, ...expected } = o;
  await expectHarnessRollout(run, expected);
  const facts = realTemplateFacts(run.records, model, opener);
  expect(facts).toMatchObject({ promptsOpenWithControl: true, repliesEndWithStop: true, promptsAreTokenizerIds: true });
  expect(run.records.find((r) => !isSideCall(r.role))!.outputIds).toContain(model.tokenizer.tokenId(toolCallToken));
  // A later main call whose prompt the template rendered differently from the ids reused is a fork:
  // none may be. (The first main call is the root, as in titoStats: after a side call, such as a
  // session title, the ledger calls its full render a fork too.)
  const main = run.records.filter((r) => !isSideCall(r.role));
  expect(main.slice(1).filter((r) => r.drift?.class === 'fork').map((r) => r.callIndex)).toEqual([]);
  return facts;
}
