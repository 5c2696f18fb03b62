import type { HarnessFingerprint } from './harness';
import type { SandboxIdentity } from './sandbox';

/** The installed CLI of a harness, as npm installed it. */
export interface LockedCli {
  /** npm package name, e.g. `@anthropic-ai/claude-code`. */
  package: string;
  version: string;
  /** The `integrity` npm recorded for it (package-lock.json of its install), when there is one. */
  integrity?: string;
  /** sha256 of its package.json, for installs npm recorded no integrity for (linked, built). */
  manifest: string;
}

/** One harness of the run, in the lock. */
export interface LockedHarness {
  /** The plugin package that provides it, with its version (`@clawgym/harness-pi@0.1.0`). */
  provider: string;
  /** The CLI it runs, where it is an npm package. */
  cli?: LockedCli;
  /** Its CLI's `--version`, where no package was found (a binary on PATH). */
  version?: string;
  /**
   * What it sends the model besides the task (system prompt hash, tool schema hashes), as last
   * seen by a run of this config; absent until a run has seen it.
   */
  fingerprint?: HarnessFingerprint;
}

/** One task suite of the run, in the lock. */
export interface LockedSuite {
  /** The plugin package that provides it, with its version. */
  provider: string;
  /** sha256 over every task of both splits: ids, split membership, text, limits, setup and verifier code. */
  tasks: string;
  train: number;
  test: number;
  /** Source file or folder (absolute) → sha256 of its content, for suites read from files. */
  sources?: Record<string, string>;
}

/**
 * `clawgym.lock.json`: everything a run's result depends on besides its seed, by content. Written
 * beside the config by `clawgym lock` and into each run folder when the run starts; `clawgym run
 * --frozen` refuses to start when anything differs, and `clawgym diff` compares two runs' locks.
 */
export interface RunLock {
  lockVersion: 1;
  /** When it was written (ISO time); never compared. */
  createdAt: string;
  /** sha256 of the resolved config (plain data, plugin objects by name, its folder left out). */
  config: string;
  /** Every package the run loads: `@clawgym/core` and each plugin's, name → version. */
  packages: Record<string, string>;
  harnesses: Record<string, LockedHarness>;
  /**
   * Local files of the engine and trainer (tokenizer, chat template, checkpoint), by the option
   * that names them (`engine.tokenizer`), then file name → sha256.
   */
  model: Record<string, Record<string, string>>;
  /** The sandbox provider (`local`, `docker`), the plugin package that provides it, and what its sandboxes run on. */
  sandbox: { name: string; provider: string } & Partial<SandboxIdentity>;
  /** Suite name → what it holds. */
  tasks: Record<string, LockedSuite>;
}
