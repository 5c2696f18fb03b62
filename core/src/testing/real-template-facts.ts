import type { ChatModel } from '../model/load';
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
