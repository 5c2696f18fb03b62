/**
 * OfficeQA answers: the final answer from its tag, and the matching of it against the gold
 * (see `answer/match.ts` and docs/verifiers.md).
 */
import { matchAnswer, type MatchOptions } from './answer/match';

export { matchAnswer, numbersAgree, splitSpans, type MatchOptions, type MatchResult } from './answer/match';
export { readNumbers, wordsToDigits, isYearLike, SCALE_WORDS, type NumberMention } from './answer/numbers';
export { normalizeText, officeqaText } from './answer/text';

/**
 * The text between the last `<FINAL_ANSWER>` and `</FINAL_ANSWER>` (as reward.py takes it), or
 * undefined when there is no tag.
 */
export function extractFinalAnswer(text: string): string | undefined {
  const matches = [...text.matchAll(/<FINAL_ANSWER>([\s\S]*?)<\/FINAL_ANSWER>/gi)];
  return matches.length ? matches[matches.length - 1]![1]!.trim() : undefined;
}

/** {@link matchAnswer} as a yes or no. */
export function answersMatch(predicted: string, gold: string, options: MatchOptions | number = {}): boolean {
  return matchAnswer(predicted, gold, typeof options === 'number' ? { relativeTolerance: options } : options).match;
}
