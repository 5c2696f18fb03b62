/**
 * Test kit for plugin authors (`@clawgym/core/testing`), in the spirit of ESLint's RuleTester
 * and Fastify's `inject`: a kernel with your plugins applied in three lines, and a fixture
 * runner that turns a folder of cases into tests.
 *
 * ```ts
 * const kernel = await createTestKernel({ plugins: [myPlugin()], config: { algorithm: 'mine' } });
 * const result = await computeStepAdvantages(kernel, trees);
 * ```
 */
export { createTestKernel, type TestKernelOptions } from './test-kernel';
export { fixtureCases, type FixtureCase } from './fixtures';
export { makeTree, type TreeSpec } from './trees';
export { recordingSandbox, type RecordingSandbox } from './recording-sandbox';
export { startScriptedProxy } from './scripted-proxy';
export { installedHarness, installedHarnessOptions, REAL_HARNESSES, harnessE2ePrerequisites, bubblewrapMissing, describeIf, outcomeWhenMissing, HARNESS_DIR } from './harnesses';
export { runHarnessOnce } from './harness-e2e';
export { expectHarnessRollout, type E2eRun, type RolloutExpectation } from './harness-e2e-checks';
export { recordedRequest, startRequestCapture, RECORDED_REQUESTS_DIR, type CapturedRequest } from './request-capture';
export { offeredTools, oracleCallProblems, ORACLE_VOCABULARY, type OfferedTool } from './oracle-tools';
export { simulateRollout, type HarnessOp } from './simulated-harness';
export { describeKernelConformance } from './kernel-conformance';
export { tempProject, removeTempProjects } from './temp-project';
export {
  describeSandboxConformance, describeLimitConformance, limitCheck, openEscapeLab, commandLinesHolding, ESCAPES, LIMITS,
  type ConformanceSetup, type ConformanceOptions, type Escape, type EscapeLab, type Limit, type LimitCheck,
} from './sandbox-conformance';
export {
  checkTaskSuite, describeTaskSuite, suiteOfPlugin, playOracle, formatProblems,
  type TaskSuiteTesterOptions, type SuiteProblem, type SuiteCheck,
} from './task-suite-tester';
