/**
 * `node netns-run.js <socket> <port> <cwd> -- <argv...>`: run inside a fresh network namespace
 * (started by `unshare -n`, with `lo` up): forward 127.0.0.1:<port> to the proxy's Unix socket,
 * run the command in <cwd> with the environment it was given, exit with its code.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { startForwarder } from './forwarder';

async function main(): Promise<number> {
  const sep = process.argv.indexOf('--');
  const [socketPath, port, cwd] = process.argv.slice(2, sep);
  const argv = process.argv.slice(sep + 1);
  if (!socketPath || !port || !cwd || sep < 0 || argv.length === 0) {
    process.stderr.write('usage: netns-run <socket> <port> <cwd> -- <command...>\n');
    return 2;
  }
  const forwarder = await startForwarder(socketPath, Number(port));
  // PWD says <cwd>, as a shell starting it there would: the `sh -c` in front of this left the
  // runner's own folder in it, and CLIs that read PWD (OpenCode, Kilo Code) told the model so.
  const child = spawn(argv[0]!, argv.slice(1), { cwd, stdio: 'inherit', env: { ...process.env, PWD: cwd } });
  const stop = (sig: NodeJS.Signals) => child.kill(sig);
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const code = await new Promise<number>((resolve) => {
    child.on('error', (err) => { process.stderr.write(`netns-run: ${err.message}\n`); resolve(127); });
    // A child killed by a signal exits the shell way: 128 + the signal's number (137 = SIGKILL).
    child.on('exit', (c, signal) => resolve(c ?? (signal ? 128 + (constants.signals[signal] ?? 15) : 1)));
  });
  forwarder.close();
  return code;
}

if (require.main === module) void main().then((code) => process.exit(code));
