import { ByteTokenizer } from './byte-tokenizer';
import { ChatMlTemplate } from './chatml';

/** The byte-level tokenizer with its ChatML template: the default pair of the built-in engines. */
export function byteChatMl(): { tokenizer: ByteTokenizer; chatTemplate: ChatMlTemplate } {
  const tokenizer = new ByteTokenizer();
  const chatTemplate = new ChatMlTemplate(tokenizer, {
    imStart: tokenizer.special('<|im_start|>'),
    imEnd: tokenizer.special('<|im_end|>'),
    toolCall: tokenizer.special('<tool_call>'),
    toolCallEnd: tokenizer.special('</tool_call>'),
    think: tokenizer.special('<think>'),
    thinkEnd: tokenizer.special('</think>'),
  });
  return { tokenizer, chatTemplate };
}
