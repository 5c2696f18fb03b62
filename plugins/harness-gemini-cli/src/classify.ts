import { systemText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** How the system prompts of Gemini CLI's helper calls begin (0.61.0), and what each is. */
export const GEMINI_SIDE_PROMPTS: readonly (readonly [string, CallRole])[] = [
  // Chat compression: history distilled into a <state_snapshot>.
  ['You are a specialized system component responsible for distilling chat history', 'compaction'],
  // The model router (no `-m`): scores the request's complexity to pick a model.
  ['You are a specialized Task Routing AI', 'side'],
  // Loop detection, after many turns.
  ['You are a diagnostic agent that determines whether a conversational AI assistant is stuck', 'side'],
  // The edit fixer, after a failed `replace`.
  ['You are an expert code-editing assistant', 'side'],
  ['You are an Auto Memory Extraction Agent', 'memory'],
  ['You are an expert Context Memory Manager', 'memory'],
];

/**
 * What a Gemini CLI request is for, read from requests recorded from the CLI (0.61.0) and the
 * prompts in its bundle: the helper calls above by their system prompt's opening; a subagent
 * (`invoke_agent`: generalist, codebase_investigator, ...) by its `complete_task` tool, which
 * only subagents have (it is how they finish); a request without tools is a side call; the rest
 * is the main agent. Only positive signs make a side call, so a changed main prompt never empties
 * the main tree.
 */
export function classifyGeminiCliCall(conversation: CanonicalConversation): CallRole {
  const system = systemText(conversation).trimStart();
  for (const [opening, role] of GEMINI_SIDE_PROMPTS) if (system.startsWith(opening)) return role;
  if (conversation.tools.some((t) => t.name === 'complete_task')) return 'subagent';
  return conversation.tools.length === 0 ? 'side' : 'main';
}
