import type { ParsedRequest } from './wire/types';
import { WireError } from './wire/types';

/** The request's sampling fields under each wire format's own names, for error messages. */
const NAMES: Record<string, { maxTokens: string; maxTemperature: number }> = {
  // The highest temperature each provider's API takes (Anthropic 1, OpenAI and Gemini 2).
  'anthropic-messages': { maxTokens: 'max_tokens', maxTemperature: 1 },
  'openai-chat': { maxTokens: 'max_tokens', maxTemperature: 2 },
  'openai-responses': { maxTokens: 'max_output_tokens', maxTemperature: 2 },
  'gemini-generate-content': { maxTokens: 'generationConfig.maxOutputTokens', maxTemperature: 2 },
};

/**
 * Refuse sampling values no engine can honour, as a 400 in the wire format's error shape
 * (the server answers a WireError with the adapter's `errorBody`). Without this, `top_p` ≤ 0
 * made the embedded engine sample from an empty nucleus (NUL bytes, null logprobs) and a
 * negative temperature or `max_tokens` was passed on; a temperature of 1e308 flattened the
 * distribution into noise (the providers' own APIs refuse above 1 or 2). The one place these rules live: every
 * template and engine relies on the proxy having checked them.
 */
export function validateSampling(parsed: Pick<ParsedRequest, 'maxTokens' | 'temperature' | 'topP'>, format: string): void {
  const names = NAMES[format] ?? NAMES['openai-chat']!;
  const { maxTokens, temperature, topP } = parsed;
  if (topP !== undefined && !(topP > 0 && topP <= 1)) throw new WireError(400, 'invalid_request', `top_p must be in (0, 1], got ${topP}`);
  if (temperature !== undefined && !(temperature >= 0 && temperature <= names.maxTemperature)) {
    throw new WireError(400, 'invalid_request', `temperature must be from 0 to ${names.maxTemperature}, got ${temperature}`);
  }
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens >= 1)) {
    throw new WireError(400, 'invalid_request', `${names.maxTokens} must be a whole number of at least 1, got ${maxTokens}`);
  }
}
