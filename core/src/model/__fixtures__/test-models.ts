// The test models live in the test kit (plugins' e2e tests use them too).
export { TEST_MODELS, testModelDir, testModel, GOLDEN_NOW, type TestModel } from '../../testing/test-models';
