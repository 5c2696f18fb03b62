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
export { auxiliaryNodeIds, isTrainable, trainableNodes } from './tree/trainable';
/** zod, re-exported so plugins validate options with the same instance as core. */
export { z } from 'zod';
export { fsWorkspace } from './tasks/workspace';
export { Rng } from './util/rng';
export { ByteTokenizer, SPECIAL_TOKENS, type SpecialToken } from './engine/byte-tokenizer';
export { ChatMlTemplate, parseToolCall, type ChatMlSpecials } from './engine/chatml';
export { byteChatMl } from './engine/byte-chatml';
export { repliesByTurn, ScriptedEngine, type Script, type ScriptContext, type ScriptedTurn } from './engine/scripted';
export { eachToken, tokensOf } from './engine/token-steps';
export { ServingProxy, type ClosedSession, type ProxyOptions } from './proxy/server';
export type { SessionInfo } from './proxy/sessions';
export { TitoLedger, type PreparedPrompt } from './proxy/ledger';
export { CallStore } from './rollout/call-store';
export { createNetnsSandbox, netnsAvailable, netnsSandboxProvider, SANDBOX_PROXY_PORT } from './sandbox/netns';
export { checkWorkspacePath, refuseWorkspacePath } from './sandbox/workspace-path';
export { startForwarder } from './sandbox/forwarder';
export { SandboxPaths, hostFiles, type Mount, type Located } from './sandbox/paths';
export { collectOutput, collectProcess, type Collected } from './sandbox/collect';
export { stopWhen, type StopWhen } from './sandbox/stop';
export { killGroup, namespacePid } from './sandbox/marking';
export { removeTree } from './sandbox/sweep';
export { kernelControllers, type Controller } from './sandbox/cgroups';
export type { LimitEnforcement } from './sandbox/machine';
export { titoStats, titoSummary } from './rollout/tito-stats';
export { buildTree, firstMainCall, TreeBuilder, type BuildOptions, type RolloutInfo } from './tree/builder';
export { buildTreeFromStream, type CallSummary } from './tree/build-stream';
export { applyFilters, removeDeadLeaves, keptLeaves, type FilterOptions } from './tree/filters';
export { packTree, flattenBranches, type PackedTree, type FlatBranch } from './tree/pack';
export { clippedTisLoss, policyLoss, valueLoss, type PolicyLossInput, type PolicyLossResult } from './train/policy-loss';
export { treesToDatums, foldImportanceWeight, type BatchDatums } from './train/datums';
export { datumStep } from './train/datum-step';
export { UnigramDatumTrainer, UnigramTrainer, datumTokenLoss } from './train/unigram-trainer';
export { loadUnigramWeights, saveUnigramWeights, UNIGRAM_MODEL_TYPE } from './train/unigram-weights';
export { buildStepTrees, computeStepAdvantages } from './tree/pipeline';
export { drawTree } from './tree/draw';
export { RolloutRunner, type RolloutJob, type RolloutReport, type RunnerOptions } from './rollout/runner';
export { fingerprintChanges, fingerprintOf, fingerprintSource, formatFingerprint, maskRolloutText, type FingerprintSource, type HarnessFingerprint } from './fingerprint/fingerprint';
export { FingerprintWatch, readFingerprints, FINGERPRINTS_FILE, type FingerprintFile } from './fingerprint/watch';
export { localSandboxProvider, bubblewrapPath, type LocalSandboxOptions } from './sandbox/local';
export { ownerAlive, ownerStamp, parseOwner, readOwnerFile, writeOwnerFile, type OwnerStamp } from './sandbox/owner';
export { parseWireRequest, wireAdapters } from './proxy/wire';
export type { ParsedRequest } from './proxy/wire/types';
export { referenceKernels } from './kernels/reference';
export { evaluate, summarize, type EvalOptions, type EvalReport, type EvalRow } from './eval/evaluate';
export { oracleEngine, nullEngine } from './eval/oracle';
export { cliVersion, harnessResult, installRootOf, lastUserText, systemText } from './harness-helpers';
export { checkClisInSandbox, type HarnessToCheck } from './doctor/cli-in-sandbox';
export { cliCheck } from './util/which';
export { newToolCallId } from './engine/chatml';
export { oracleOf } from './eval/oracle';
export { splitOf, pickSplit, hashUnit, type SplitOptions } from './tasks/split';
export { eventsToMessage } from './engine/output';
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
export type { HarnessSlot, RunTasks } from './rollout/tokens';
export { driftStats, driftSummary } from './rollout/drift-stats';
export { AdamOptions } from './train/adam-options';
export { saveCheckpoint } from './train/checkpoint';
export { reductionFactors } from './train/datums';
export { IdChunks } from './util/id-chunks';
export { sameValues } from './util/same-values';
export { isSettled, settle } from './util/settled';
