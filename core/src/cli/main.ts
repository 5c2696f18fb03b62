import { Command, CommanderError, Option } from 'commander';
import { CORE_VERSION } from '../version';
import { ExitCode, printError } from './errors';
import { stopSpawner } from '../2-sandbox/spawner';
import { formatTable, listPlugins } from './commands/plugins';
import { serve, type ServeOptions } from './commands/serve';
import { inspect } from './commands/inspect';
import { gc } from './commands/gc';
import { evalCommand, type EvalCliOptions } from './commands/eval';
import { sft, type SftOptions } from './commands/sft';
import { runCommand } from './commands/run';
import { doctorCommand } from './commands/doctor';
import { engineServe, type EngineServeOptions } from './commands/engine-serve';
import { templateCommand, type TemplateCliOptions } from './commands/template';
import { trainerCommands } from './commands/trainer-serve';
import { reportCommand, type ReportCliOptions } from './commands/report';
import { fingerprintCommand } from './commands/fingerprint';
import { newPluginCommand } from './commands/new';
import { NEW_PLUGIN_KINDS } from '../scaffold/new-plugin';
import { diffCommand, lockCommand } from './commands/lock';
import type { LiveStream } from './live';

interface CommonOptions { config?: string }

const configOption = () => new Option('-c, --config <file>', 'config file (default: clawgym.config.{ts,mts,js,mjs} or "clawgym" in package.json, searched from the current folder up)');

/** Build the `clawgym` command tree. Output goes through `out`/`err` so tests can capture it. */
export interface CliIo {
  out: (s: string) => void;
  err: (s: string) => void;
  cwd: string;
  /** Stops long-running commands (serve) in tests; the CLI itself stops on SIGINT. */
  signal?: AbortSignal;
  /** The terminal, when there is one: `clawgym run` draws a live status line on a TTY. */
  stdout?: LiveStream;
}

export function buildProgram(io: CliIo): Command {
  const program = new Command('clawgym')
    .description('Train agent models with RL through real, unmodified agent harnesses.')
    .version(CORE_VERSION, '-v, --version')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();
  /** A subcommand with --config, exit codes instead of process.exit, and output through io. */
  const command = (name: string, description: string) => program.command(name).description(description)
    .addOption(configOption()).exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });

  program.addHelpText('after', `
Examples:
  clawgym run                          train with ./clawgym.config.ts
  clawgym run --config examples/ppo.config.ts
  clawgym run --resume --steps 300     continue a run (killed or finished) up to step 300
  clawgym plugins                      list installed plugins and what they provide
  clawgym doctor                       what the config needs that this machine lacks, and how to install it
  clawgym doctor --fix                 install it (system packages as root; otherwise prints the sudo line)
  clawgym new plugin --kind task words a task-suite plugin package (kinds: task, harness, hooks, algorithm, reporter)
  clawgym inspect runs/default --rollout r-0001

Exit codes: 0 success, 1 failure, 2 usage error. Set CLAWGYM_DEBUG=1 for stack traces.`);


  trainingCommands(command, io);
  servingCommands(program, command, io);
  trainerCommands(program, io, configOption);
  runFolderCommands(program, command, io);
  machineCommands(command, io);
  authoringCommands(program, io);
  return program;
}

/** A subcommand with --config, exit codes instead of process.exit, and output through io. */
type CommandMaker = (name: string, description: string) => Command;

/** `run`, `eval` and `sft`: training and evaluation as the config says. */
function trainingCommands(command: CommandMaker, io: CliIo): void {
  command('run', 'run RL training as the config says (rollouts through harnesses, trees, advantages, updates)')
    .option('--resume', 'continue the run from its last finished step')
    .option('-n, --name <name>', 'run name (default: the config\'s name)')
    .option('--steps <n>', 'train this many steps in all instead of run.steps (with --resume: extend a finished run)')
    .option('--frozen', "refuse to start when anything differs from clawgym.lock.json beside the config (harness CLIs, model files, sandbox image, packages, tasks, config), a resume also from the run's own lock; stop when a harness's prompt or tools change in mid-run")
    .action(async (opts: { config?: string; resume?: boolean; name?: string; steps?: string; frozen?: boolean }) => runCommand(opts, io));
  command('lock', 'write clawgym.lock.json beside the config: harness CLIs (package, version, integrity, fingerprint), model files, sandbox image, packages, task suites, config hash')
    .option('--json', 'print the lock as JSON')
    .action(async (opts: { config?: string; json?: boolean }) => lockCommand(opts, io));
  command('eval', 'evaluate the policy on the test split: Pass@1 and pass@k per harness and category, as real rollouts')
    .option('-e, --engine <name>', 'engine instead of the config\'s; "oracle" plays each task\'s solution, "null" answers "I don\'t know"')
    .option('--harness <name...>', 'harnesses instead of the config\'s')
    .option('--suite <name...>', 'task suites instead of the config\'s')
    .addOption(new Option('--split <split>', 'which split').choices(['train', 'test']).default('test'))
    .option('-k <k>', 'samples per task', '1')
    .option('--limit <n>', 'tasks per suite (default: run.evalTasks)')
    .option('--concurrency <n>', 'rollouts at once (default: run.concurrency)')
    .option('-n, --name <name>', 'run name for the results (default: eval-<engine>-<time>)')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: EvalCliOptions) => evalCommand(opts, io));
  command('sft', 'supervised cold start: the oracle plays train tasks through the harnesses; train on the passing rollouts; save a checkpoint')
    .option('--demos <n>', 'train tasks to play per suite', '64')
    .option('--steps <n>', 'supervised steps', '200')
    .option('--batch <n>', 'trees per step', '8')
    .option('-o, --out <dir>', 'checkpoint folder (default: runs/<name>/checkpoint)')
    .option('-n, --name <name>', 'run name', 'sft')
    .option('--lr <lr>', 'peak learning rate, decayed along a cosine to a tenth (the config\'s optimiser lr is for RL)', '1e-3')
    .option('--stop-after <n>', 'stop after step n of the --steps schedule (calibrating a cold start); default: --steps')
    .option('--save-every <n>', 'save the checkpoint every n steps as well as at the end (0: only at the end)', '100')
    .option('--fresh', 'start from random weights even if the config names a checkpoint (to remake it)')
    .option('--reuse-demos', 'train on the demonstrations the last sft of this name played (runs/<name>/demos) instead of playing them again')
    .action(async (opts: SftOptions) => sft(opts, io));
}

/** `serve` and `engine serve`: the proxy, and the engine as a server of its own. */
function servingCommands(program: Command, command: CommandMaker, io: CliIo): void {
  command('serve', 'start the serving proxy with the configured engine and print per-session URLs and keys')
    .option('-e, --engine <name>', 'engine provider to use instead of the config\'s (e.g. scripted)')
    .option('--host <host>', 'address to listen on (default: proxy.host, 127.0.0.1)')
    .option('-p, --port <port>', 'port to listen on (default: proxy.port; 0 picks a free one)')
    .option('-s, --sessions <n>', 'sessions to open', '1')
    .option('-n, --name <name>', 'run name for the records (default: serve-<time>)')
    .action(async (opts: ServeOptions) => serve(opts, io));

  const engine = program.command('engine').description('the policy engine as a server of its own').exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  engine.command('serve').description('serve the config\'s embedded engine behind vLLM\'s /v1/completions and SGLang\'s /generate, weight-update routes included')
    .addOption(configOption()).exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err })
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', '0')
    .option('--served-model-name <name>', 'the model name vLLM clients send (default: the engine\'s name)')
    .option('--sglang-deterministic', 'as SGLang with --enable-deterministic-inference: sampling_params.sampling_seed seeds the sampling (ignored otherwise); /get_server_info says which')
    .addOption(new Option('--sglang <behaviour>', 'which SGLang to reproduce: 0025436e (pause_generation takes no body and aborts everything in flight) or modes (pause modes, /model_info)').choices(['0025436e', 'modes']).default('0025436e'))
    .addOption(new Option('--as <release>', 'answer as this server release does: its protocol\'s routes only (the other\'s answer 404), its pause, its /get_weight_version, its refusals (422 where FastAPI validates a body); overrides --sglang and --no-vllm-weight-info').choices(['sglang@0025436e', 'sglang@8905cbd4', 'vllm@c8109375', 'vllm@90245f41']))
    .option('--vllm-disk-transfer', 'serve vLLM\'s weight-transfer routes with the disk backend (only in the unreleased PR #52152)')
    .option('--no-vllm-weight-info', 'answer 404 at /weight_info, as vLLM before PR #49040')
    .option('--tokenizer <folder>', 'serve the scripted engine in this Hugging Face model\'s tokens and chat template instead of the config\'s engine: replies from --replies, logprobs under the unigram policy `trainer serve --tokenizer` trains (its weights load through the update routes)')
    .option('--replies <file>', 'with --tokenizer: a JSON array of scripted turns ({text, thinking, toolCalls: [{name, arguments}]}); turn N of a conversation gets reply N, the last repeats (default: one line of text)')
    .option('--context-length <tokens>', 'with --tokenizer: the context it stands for (max_model_len; the proxy refuses longer prompts)', '65536')
    .addHelpText('after', `
Stand-in for a real model (a run of OpenClaw's ~40 KB prompts, which the embedded byte-level model
cannot hold): --tokenizer serves ClawGym's scripted engine with that model's tokenizer and chat
template, so the vLLM/SGLang clients, the proxy and the records see real token ids, and answers
each reply token with its logprob under a unigram policy over that vocabulary. Pair it with
\`clawgym trainer serve --tokenizer <same folder>\`, which trains that policy; its published
weights arrive at /update_weights_from_disk (SGLang) or the disk transfer routes (vLLM).
  clawgym engine serve --tokenizer models/qwen3-4b --replies replies.json --port 8001`)
    .action(async (opts: EngineServeOptions) => engineServe(opts, io));
}

/** `inspect`, `harness fingerprint`, `template` and `report`: reading what a run recorded. */
function runFolderCommands(program: Command, command: CommandMaker, io: CliIo): void {
  command('inspect', 'show the model calls of a run\'s rollouts: TITO reuse, forks and their causes, token counts')
    .argument('<run>', 'run directory (e.g. runs/default)')
    .option('-r, --rollout <id>', 'one rollout, call by call')
    .option('--json', 'print JSON')
    .option('--tokenizer <folder>', 'model folder to read the ids with (default: the run config\'s engine.options.tokenizer, else byte-level)')
    .action(async (run: string, opts: { rollout?: string; json?: boolean; tokenizer?: string }) => inspect(run, opts, io));
  const harness = program.command('harness').description('what the real harnesses send the model').exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  harness.command('fingerprint').description('system prompt hash, tool names and schema hashes, CLI version: as pinned in a run and as last seen, and what changed')
    .exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err })
    .argument('<harness>', 'harness name, e.g. opencode')
    .argument('[run]', 'run directory (default: the newest under runs/ that used the harness)')
    .option('--json', 'print JSON')
    .action(async (name: string, run: string | undefined, opts: { json?: boolean }) => fingerprintCommand(name, run, opts, io));
  program.command('diff').description('what differed between two runs: config options, harness CLIs, model files, sandbox, packages, tasks')
    .exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err })
    .argument('<runA>', 'run directory').argument('<runB>', 'run directory')
    .option('--json', 'print JSON')
    .action(async (a: string, b: string, opts: { json?: boolean }) => diffCommand(a, b, opts, io));
  command('template', 'render a request with a model folder\'s tokenizer and chat template as the proxy would ({"text", "ids"}), or parse generated ids back')
    .argument('[request]', 'a request body (JSON file; OpenAI Chat by default)')
    .requiredOption('-m, --model <folder>', 'the model\'s Hugging Face folder (tokenizer.json, tokenizer_config.json, chat template)')
    .option('--parse <ids>', 'a JSON file of generated ids: print the message the harness would receive')
    .addOption(new Option('--format <format>', 'wire format of the request').choices(['openai-chat', 'anthropic', 'openai-responses', 'gemini']).default('openai-chat'))
    .option('--kwargs <json>', 'template variables, e.g. \'{"enable_thinking": false}\'')
    .action(async (request: string | undefined, opts: TemplateCliOptions) => templateCommand(request, opts, io));
  command('report', 'write the HTML report of a run (plots, and every rollout: calls, tree, advantages, verdict), or of several overlaid')
    .argument('<runs...>', 'run directories (e.g. runs/default; two or more: overlaid)')
    .option('-o, --out <file>', 'the HTML file (default: <run>/report.html; for several runs ./compare-<a>-<b>.html)')
    .option('--serve', 'serve the report on loopback, reading the run folders as rollouts are opened (large runs)')
    .option('-p, --port <port>', 'with --serve: the port (default: a free one)')
    .option('--inline', 'one self-contained file whatever the run\'s size')
    .option('--paged', 'a data folder beside the page whatever the run\'s size')
    .action(async (runs: string[], opts: ReportCliOptions) => reportCommand(runs, opts, io));
}

/** `gc`, `doctor` and `plugins`: this machine and what is installed on it. */
function machineCommands(command: CommandMaker, io: CliIo): void {
  command('gc', 'remove what killed runs left behind: sandbox processes, cgroups, temp folders, containers')
    .option('--run <id>', 'only this run\'s leftovers')
    .option('--all', 'every project\'s leftovers on this machine, not only this project\'s')
    .action(async (opts: { config?: string; run?: string; all?: boolean }) => gc(opts, io));

  command('doctor', 'check this machine for what the config needs: installed, missing, and the command that installs it')
    .option('--json', 'print JSON instead of a table')
    .option('--fix', 'run the install commands for what is missing (system packages with apt-get as root; otherwise print the sudo line), then check again')
    .action(async (opts: { config?: string; json?: boolean; fix?: boolean }) => doctorCommand(opts, io));

  command('plugins', 'list every discovered plugin: kind, name, version, package')
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: CommonOptions & { json?: boolean }) => {
      const rows = await listPlugins({ cwd: io.cwd, configFile: opts.config });
      if (opts.json) {
        io.out(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      if (rows.length === 0) {
        io.out('No ClawGym plugins found. Install one (npm i -D @clawgym/algo-grpo) or list it in clawgym.config.ts.\n');
        return;
      }
      io.out(`${formatTable(['KIND', 'NAME', 'VERSION', 'PACKAGE'], rows.map((r) => [r.kind, r.name, r.version, r.packageName]))}\n`);
      for (const r of rows.filter((x) => x.error)) io.err(`warning: ${r.packageName}: ${r.error}\n`);
    });
}

/** `new plugin`: packages of one's own. */
function authoringCommands(program: Command, io: CliIo): void {
  const make = program.command('new').description('make a new package').exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  make.command('plugin').description('make a plugin package: source, kit tests that pass as made, a build, and its provides entry')
    .argument('<name>', 'the provider\'s name (the package is clawgym-plugin-<name>, or @scope/clawgym-plugin-<name>)')
    .addOption(new Option('--kind <kind>', 'what it provides').choices(NEW_PLUGIN_KINDS).makeOptionMandatory())
    .option('--dir <dir>', 'the folder to make (default: the package\'s name)')
    .exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err })
    .action((name: string, opts: { kind: string; dir?: string }) => newPluginCommand(name, opts, io));
}

/** Run the CLI; resolves to the exit code. */
export async function main(argv: string[], io: CliIo = {
  out: (s: string) => { process.stdout.write(s); },
  err: (s: string) => { process.stderr.write(s); },
  cwd: process.cwd(),
  stdout: process.stdout,
}): Promise<number> {
  const program = buildProgram(io);
  if (argv.length === 0) {
    io.out(program.helpInformation());
    return ExitCode.USAGE;
  }
  // An unknown command is a usage error even with --help (commander would print the top-level
  // help for `clawgym nope --help` and exit 0).
  const first = argv[0]!;
  if (!first.startsWith('-') && first !== 'help' && !program.commands.some((c) => c.name() === first || c.aliases().includes(first))) {
    io.err(`error: unknown command '${first}' (commands: ${program.commands.map((c) => c.name()).join(', ')})\n(run with --help for usage)\n`);
    return ExitCode.USAGE;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return ExitCode.OK;
      return ExitCode.USAGE;
    }
    printError(err, io.err);
    return ExitCode.FAILURE;
  }
}

/**
 * The `clawgym` executable: run the CLI on the process's arguments and set the exit code. A
 * reader that closes the pipe early (`clawgym plugins | head -1`) ends it quietly, as other
 * command-line tools do, instead of with an unhandled EPIPE.
 */
export function runCli(argv: string[] = process.argv.slice(2)): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
  main(argv).then(
    (code) => { process.exitCode = code; if (code !== ExitCode.OK) exitSoon(); },
    (err: unknown) => { printError(err); process.exitCode = ExitCode.FAILURE; exitSoon(); },
  // The spawner helper is waited for: left to exit after this process, it is a zombie for init to reap.
  ).finally(() => stopSpawner());
}

/**
 * A command that failed has cleaned up what it could; if something it started is still open
 * (a server, a child, a file being written to a full disk) 10 s later, the process exits anyway,
 * saying so: a failed command never hangs.
 */
function exitSoon(): void {
  setTimeout(() => {
    process.stderr.write(`clawgym: still busy 10 s after the command failed (${process.getActiveResourcesInfo().join(', ')}); exiting\n`);
    process.exit(process.exitCode ?? ExitCode.FAILURE);
  }, 10_000).unref();
}

// `node core/dist/cli/main.js` (the `clawgym` npm script) runs the CLI like the bin does.
if (require.main === module) runCli();
