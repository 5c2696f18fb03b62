/**
 * `@clawgym/core`: the kernel (DI container, typed hook map, plugin registry), the contracts
 * every plugin kind implements, config loading, and the `clawgym` CLI.
 */
export * from './contracts';
export { ClawGymError, ErrorCodes, isClawGymError, messageOf, type ErrorCode } from './errors';
export { CORE_VERSION } from './version';
export { createHooks, HookStage } from './kernel/hooks';
export {
  HOOK_NAMES,
  type HookMap, type HookName, type RolloutRequest, type RolloutResult,
  type RunInfo, type StepInfo, type StepResult, type RunSummary,
  type PluginHook, type PluginHooks, type TapOptions,
} from './contracts/hooks';
export { HookError, HookTimeoutError } from './kernel/hook-errors';
export { definePlugin } from './kernel/plugin';
export {
  isPlugin, PLUGIN_KINDS, KIND_PREFIX,
  type ClawGymPlugin, type PluginApi, type PluginFactory, type PluginKind, type ProvidedKinds, type Provide, type Logger,
} from './contracts/plugin';
export { Registry, type PluginOrigin, type RegistryEntry } from './kernel/registry';
export { Kernel, assertCompatible } from './kernel/kernel';
export { Tokens } from './run/tokens';
export { provider, slotName, slotOptions, trainerOptions, usePluginRef, type SlotRef } from './kernel/create';
export { assertWeightsRoute, weightsRouteProblem } from './kernel/weights-route';
export { createKernel } from './run/create-kernel';
export { untilStopped } from './cli/interrupt';
export type { EngineServeOptions } from './cli/commands/engine-serve';
export type { TrainerServeOptions } from './cli/commands/trainer-serve';
export { pluginCandidates, findPluginPackage, loadPluginFromPackage, type PluginPackage } from './kernel/resolve';
export { discoverPluginPackages } from './kernel/discover';
export { defineConfig } from './config/define';
export { ConfigSchema, type ClawGymConfig, type ResolvedConfig } from './config/schema';
export { loadConfig, resolveConfig, CONFIG_FILES } from './config/load';
export { parseWithSchema } from './config/validate';
export { auxiliaryNodeIds, isTrainable, trainableNodes } from './7-tree/trainable';
/** zod, re-exported so plugins validate options with the same instance as core. */
export { z } from 'zod';
export { fsWorkspace } from './1-tasks/workspace';
export { Rng } from './util/rng';
export { ByteTokenizer, SPECIAL_TOKENS, type SpecialToken } from './4-proxy/engine/byte-tokenizer';
export { ChatMlTemplate, parseToolCall, type ChatMlSpecials } from './4-proxy/engine/chatml';
export { byteChatMl } from './4-proxy/engine/byte-chatml';
export { repliesByTurn, ScriptedEngine, type Script, type ScriptContext, type ScriptedTurn } from './4-proxy/engine/scripted';
export { eachToken, tokensOf } from './4-proxy/engine/token-steps';
export { ServingProxy, type ClosedSession, type ProxyOptions } from './4-proxy/server';
export type { SessionInfo } from './4-proxy/sessions';
export { TitoLedger, type PreparedPrompt } from './4-proxy/ledger';
export { CallStore } from './5-records/call-store';
export { createNetnsSandbox, netnsAvailable, netnsSandboxProvider, SANDBOX_PROXY_PORT } from './2-sandbox/netns';
export { checkWorkspacePath, refuseWorkspacePath } from './2-sandbox/workspace-path';
export { startForwarder } from './2-sandbox/forwarder';
export { SandboxPaths, hostFiles, type Mount, type Located } from './2-sandbox/paths';
export { collectOutput, collectProcess, type Collected } from './2-sandbox/collect';
export { stopWhen, type StopWhen } from './2-sandbox/stop';
export { killGroup, namespacePid } from './2-sandbox/marking';
export { removeTree } from './2-sandbox/sweep';
export { DEFAULT_DISK_LIMIT, mountDisk, parseDiskLimit, probeDiskMount, sizeInWords } from './2-sandbox/disk';
export { kernelControllers, type Controller } from './2-sandbox/cgroups';
export type { LimitEnforcement } from './2-sandbox/machine';
export { titoStats, titoSummary } from './5-records/tito-stats';
export { buildTree, firstMainCall, TreeBuilder, type BuildOptions, type RolloutInfo } from './7-tree/builder';
export { buildTreeFromStream, type CallSummary } from './7-tree/build-stream';
export { applyFilters, removeDeadLeaves, keptLeaves, type FilterOptions } from './7-tree/filters';
export { packTree, flattenBranches, type PackedTree, type FlatBranch } from './7-tree/pack';
export { clippedTisLoss, policyLoss, valueLoss, type PolicyLossInput, type PolicyLossResult } from './9-train/policy-loss';
export { treesToDatums, foldImportanceWeight, type BatchDatums } from './9-train/datums';
export { datumStep } from './9-train/datum-step';
export { datumTokenLoss } from './9-train/datum-loss';
export { buildStepTrees } from './7-tree/step-trees';
export { computeStepAdvantages } from './8-advantage/step-advantages';
export { drawTree } from './7-tree/draw';
export { RolloutRunner, type RolloutJob, type RolloutReport, type RunnerOptions } from './6-rollout/runner';
export { fingerprintChanges, fingerprintOf, fingerprintSource, formatFingerprint, maskRolloutText, type FingerprintSource, type HarnessFingerprint } from './3-harness/fingerprint/fingerprint';
export { FingerprintWatch, readFingerprints, FINGERPRINTS_FILE, type FingerprintFile } from './3-harness/fingerprint/watch';
export { localSandboxProvider, bubblewrapPath, type LocalSandboxOptions } from './2-sandbox/local';
export { ownerAlive, ownerStamp, parseOwner, readOwnerFile, writeOwnerFile, type OwnerStamp } from './2-sandbox/owner';
export { parseWireRequest, wireAdapters } from './4-proxy/wire';
export type { ParsedRequest } from './4-proxy/wire/types';
export { referenceKernels } from './9-train/reference-kernels';
export { evaluate, summarize, type EvalOptions, type EvalReport, type EvalRow } from './eval/evaluate';
export { oracleEngine, nullEngine } from './eval/oracle';
export { cliVersion, harnessResult, installedCliVersion, installRootOf, lastUserText, npmPackageVersion, ORACLE_CALL_PURPOSE, oracleShellCommand, shellQuote, systemText } from './3-harness/helpers';
export { checkClisInSandbox, type HarnessToCheck } from './doctor/cli-in-sandbox';
export { cliCheck } from './util/which';
export { newToolCallId } from './4-proxy/engine/chatml';
export { oracleOf } from './eval/oracle';
export { splitOf, pickSplit, hashUnit, type SplitOptions } from './1-tasks/split';
export { eventsToMessage } from './4-proxy/engine/output';
export { writeReport, type WriteReportOptions } from './report/report';
export { serveReport, type ReportServer } from './report/report-server';
export { chartsOf, smooth, type Chart, type Series, type RunFigures } from './report/charts';
export { renderPage, type ViewerMeta } from './report/page';
export { readRollouts, rolloutsFile, appendRollouts, rolloutEntryOf, type RolloutEntry, type TreeNodeEntry } from './report/rollout-log';
export { rolloutDetail, type RolloutDetail, type CallView } from './report/rollout-detail';
export { composeRun, type ComposeOptions, type RunPurpose, type RunServices } from './run/compose';
export { runStep, stepJobs, type StepOutcome, type StepServices } from './run/step';
export { stepMetrics } from './run/step-metrics';
export { Reporting } from './run/reporting';
export { train, type TrainOptions } from './run/train';
export { sftRun, type SftRunOptions } from './run/sft';
export { metricsJsonlReporter, htmlReporter } from './report/reporters';
export { tensorboardReporter, tensorboardDir } from './report/tensorboard/reporter';
export type { HarnessSlot, RunTasks } from './6-rollout/tokens';
export { driftStats, driftSummary } from './5-records/drift-stats';
export { AdamOptions } from './9-train/adam-options';
export { saveCheckpoint } from './9-train/checkpoint';
export { reductionFactors } from './9-train/datums';
export { IdChunks, type DirectEncoder } from './util/id-chunks';
export { ownString } from './util/own-string';
export { sameValues } from './util/same-values';
export { isSettled, settle } from './util/settled';
