/**
 * Hugging Face model support: load a model folder (tokenizer.json, tokenizer_config.json, the chat
 * template, config.json) as the proxy uses it — a tokenizer, and a chat template that renders as
 * Python's `apply_chat_template` does and parses the model's output back into messages.
 * Engines that serve a Hugging Face model (vLLM, SGLang, Tinker) load their model with it;
 * `clawgym template` and `clawgym inspect --tokenizer` load it when installed.
 */
export { loadChatModel, type ChatModel, type ChatModelOptions } from './load';
export { loadModelFolder, type ModelFolder } from './folder';
export { HfTokenizer } from './hf-tokenizer';
export { JinjaChatTemplate, type JinjaTemplateOptions, type ContinuationMemo, type Rendered } from './jinja-template';
export { toTemplateMessages, templateTools, type TemplateMessage } from './template-messages';
export { detectFamily, FAMILIES, type Family } from './families';
