/**
 * The canonical conversation every wire format is turned into before rendering.
 * Wire formats (Anthropic Messages, OpenAI Chat, OpenAI Responses) differ in shape, not in
 * meaning; the proxy normalises them into this form so prefix matching and chat templates
 * see one thing.
 */

/** A JSON-schema tool the harness offers the model. */
export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /** The request gave no schema (`parameters` is then `{}`); templates see `null`, as vLLM passes it. */
  parametersAbsent?: true;
}

/** Plain text. */
export interface TextPart { type: 'text'; text: string }
/** Model reasoning, kept so history matches what we returned. */
export interface ThinkingPart { type: 'thinking'; text: string }
/** A tool call made by the assistant. `arguments` is the JSON text of the arguments object. */
export interface ToolCallPart { type: 'tool_call'; id: string; name: string; arguments: string }
/** The result of a tool call, written by the harness. */
export interface ToolResultPart { type: 'tool_result'; callId: string; content: string; isError?: boolean }

export type MessagePart = TextPart | ThinkingPart | ToolCallPart | ToolResultPart;

/** One message of the canonical conversation. `system` may appear mid-conversation, in order. */
export interface CanonicalMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  parts: MessagePart[];
}

/** A whole request, as the chat template sees it. */
export interface CanonicalConversation {
  messages: CanonicalMessage[];
  tools: ToolSpec[];
}
