/** A message of a prompt as the viewer shows it: who wrote it and what kind of content it is. */
export interface PromptMessage {
  role: string;
  kind: 'text' | 'tool_call' | 'tool_result' | 'system';
  text: string;
}

/**
 * The turn markers of the chat template families the project supports: the role follows the
 * marker. The records hold ids, not the harness's JSON, so the prompt is read back through the
 * run's tokenizer and cut where the template opened a turn.
 */
const TURN_MARKERS: readonly RegExp[] = [
  /<\|im_start\|>(\w+)\n?/g, // ChatML (Qwen, the byte-level template)
  /<\|start_header_id\|>(\w+)<\|end_header_id\|>\n*/g, // Llama 3
  /<start_of_turn>(\w+)\n?/g, // Gemma
  /<\|start\|>(\w+)(?:<\|channel\|>\w+)?(?:<\|message\|>)?/g, // gpt-oss (harmony)
  /<｜(User|Assistant)｜>/g, // DeepSeek
];

const END_MARKERS = /<\|im_end\|>|<\|eot_id\|>|<end_of_turn>|<\|end\|>|<｜end▁of▁sentence｜>|<\|endoftext\|>/g;

function kindOf(role: string, text: string): PromptMessage['kind'] {
  if (role === 'system' || role === 'developer') return 'system';
  if (role === 'tool' || role === 'ipython' || /<tool_response>/.test(text)) return 'tool_result';
  if (/<tool_call>|<\|call\|>|"tool_calls"|<function=/.test(text)) return 'tool_call';
  return 'text';
}

/**
 * Cut decoded prompt text into the messages the template wrote. Text before the first marker
 * (the continuation of a reused prefix) is its own block with the role `…`; text no known
 * template wrote is one block.
 */
export function promptMessages(text: string): PromptMessage[] {
  for (const marker of TURN_MARKERS) {
    const hits = [...text.matchAll(marker)];
    if (!hits.length) continue;
    const out: PromptMessage[] = [];
    const lead = text.slice(0, hits[0]!.index).replace(END_MARKERS, '').trim();
    if (lead) out.push({ role: '…', kind: kindOf('', lead), text: lead });
    hits.forEach((h, i) => {
      const body = text.slice(h.index! + h[0].length, i + 1 < hits.length ? hits[i + 1]!.index : text.length).replace(END_MARKERS, '').trim();
      const role = h[1]!.toLowerCase();
      out.push({ role, kind: kindOf(role, body), text: body });
    });
    // The generation prompt (an empty assistant turn at the end) is no message.
    if (out.length && out[out.length - 1]!.role === 'assistant' && !out[out.length - 1]!.text) out.pop();
    return out;
  }
  const whole = text.replace(END_MARKERS, '').trim();
  return whole ? [{ role: '?', kind: kindOf('', whole), text: whole }] : [];
}
