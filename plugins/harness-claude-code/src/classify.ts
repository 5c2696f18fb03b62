import { systemText, type CallRequestInfo, type CallRole, type CanonicalConversation } from '@clawgym/core';

/**
 * What a Claude Code request is for, read from requests recorded from the CLI (fixtures in
 * core/src/4-proxy/__fixtures__/harness-requests):
 * - a JSON-schema reply (`output_config.format`) is a helper call: `title` for the session title
 *   (`{"title"}`, 2.1.197 stock) and the rename helper (`{"name"}`), `memory` for the memory
 *   selection and extraction checks (`selected_memories`, `write_likely`), `side` otherwise;
 * - a subagent (the Agent tool) marks its system prompt's billing line `cc_is_subagent=true` (2.1.332);
 * - a request without tools is a side call (summaries, compaction);
 * - the rest is the main agent.
 */
export function classifyClaudeCodeCall(conversation: CanonicalConversation, _model: string, request: CallRequestInfo = {}): CallRole {
  const schema = request.responseSchema;
  if (schema) {
    const props = typeof schema.properties === 'object' && schema.properties ? Object.keys(schema.properties) : [];
    if (props.includes('title') || props.includes('name')) return 'title';
    if (props.includes('selected_memories') || props.includes('write_likely')) return 'memory';
    return 'side';
  }
  if (/\bcc_is_subagent=true\b/.test(systemText(conversation))) return 'subagent';
  return conversation.tools.length === 0 ? 'side' : 'main';
}
