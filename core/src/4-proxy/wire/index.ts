import type { WireFormat } from '../../contracts/records';
import { anthropicMessages } from './anthropic';
import { geminiGenerateContent } from './gemini';
import { openAiChat } from './openai-chat';
import { openAiResponses } from './openai-responses';
import type { ParsedRequest, WireAdapter } from './types';

/** Every wire format the proxy speaks, by name. */
export const wireAdapters: Readonly<Record<WireFormat, WireAdapter>> = {
  'anthropic-messages': anthropicMessages,
  'openai-chat': openAiChat,
  'openai-responses': openAiResponses,
  'gemini-generate-content': geminiGenerateContent,
};

/** Parse a request body of a wire format into canonical form (e.g. to test a harness's classifier on captured bodies). */
export function parseWireRequest(format: WireFormat, body: unknown): ParsedRequest {
  return wireAdapters[format].parse(body);
}
