import { appendFile, mkdir, readdir } from 'node:fs/promises';
import { dirname, join, posix, relative } from 'node:path';
import { ClawGymError, ErrorCodes, messageOf, type TaskEnvironment } from '@clawgym/core';
import type Docker from 'dockerode';

/** Label on images built from a task's environment, holding the build context's content hash. */
export const LABEL_TASK_HASH = 'clawgym.task-hash';
/** How much of a failed build's output the error quotes (the whole log is in the run). */
const TAIL_LINES = 12;

/** A task's image, ready to run: its tag, working folder, PATH and the files of that folder. */
export interface TaskImage {
  tag: string;
  /** The image's WORKDIR, where the task's files are and the agent works (`/workspace` when unset). */
  workdir: string;
  /** PATH from the image's ENV, so tools the Dockerfile installed are found. */
  path?: string;
  /** A tar of the image's WORKDIR: laid into each sandbox's workspace, which is bound over it. */
  files: Buffer;
}

/** `clawgym-task:<hash>`: one image per build-context content hash, so a changed context rebuilds. */
export function taskImageTag(env: TaskEnvironment): string {
  return env.image ?? `clawgym-task:${env.hash.slice(0, 16)}`;
}

const statusOf = (err: unknown) => (err as { statusCode?: number })?.statusCode;

async function filesOf(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(relative(dir, p));
    }
  };
  await walk(dir);
  return out.sort();
}

/**
 * Builds (once per content hash, reused across rollouts and runs) and describes the images of
 * tasks that bring their own environment. Concurrent rollouts of one task share one build.
 */
export class TaskImages {
  private readonly ready = new Map<string, Promise<TaskImage>>();

  constructor(private readonly docker: Docker, private readonly defaultWorkdir: string) {}

  /** The task's image, built now if no image of this content hash exists yet. */
  prepare(env: TaskEnvironment, o: { runId: string; logDir?: string; labels: Record<string, string> }): Promise<TaskImage> {
    const tag = taskImageTag(env);
    let p = this.ready.get(tag);
    if (!p) {
      p = this.make(env, tag, o);
      this.ready.set(tag, p);
      // A failed build is retried by the next rollout that needs it (the error may be passing).
      p.catch(() => this.ready.delete(tag));
    }
    return p;
  }

  private async make(env: TaskEnvironment, tag: string, o: { runId: string; logDir?: string; labels: Record<string, string> }): Promise<TaskImage> {
    const logPath = o.logDir ? join(o.logDir, 'images', `${tag.replace(/[^a-zA-Z0-9_.-]/g, '_')}.log`) : undefined;
    const log = async (text: string) => {
      if (!logPath) return;
      await mkdir(dirname(logPath), { recursive: true });
      await appendFile(logPath, text);
    };
    let info = await this.docker.getImage(tag).inspect().catch((err: unknown) => {
      if (statusOf(err) === 404) return undefined;
      throw err;
    });
    if (info) {
      await log(`${new Date().toISOString()} ${tag} exists (content hash ${env.hash}): not rebuilt\n`);
    } else if (env.image) {
      throw new ClawGymError(ErrorCodes.IMAGE_BUILD_FAILED, `${env.source} runs in image ${env.image}, which this Docker engine does not have`, {
        hint: `pull or load it first (docker pull ${env.image}, or docker load < image.tar); ClawGym builds only from environment/Dockerfile`,
      });
    } else {
      await this.build(env, tag, log, logPath);
      info = await this.docker.getImage(tag).inspect();
    }
    const workdir = info.Config?.WorkingDir && info.Config.WorkingDir !== '/' ? posix.normalize(info.Config.WorkingDir) : this.defaultWorkdir;
    const path = info.Config?.Env?.find((e) => e.startsWith('PATH='))?.slice('PATH='.length);
    return { tag, workdir, path, files: await this.workdirFiles(tag, workdir, o) };
  }

  private async build(env: TaskEnvironment, tag: string, log: (t: string) => Promise<void>, logPath: string | undefined): Promise<void> {
    const started = Date.now();
    await log(`${new Date(started).toISOString()} building ${tag} from ${env.contextDir} (${env.dockerfile ?? 'Dockerfile'}, content hash ${env.hash})\n`);
    const abort = new AbortController();
    const timer = env.buildTimeoutMs ? setTimeout(() => abort.abort(), env.buildTimeoutMs) : undefined;
    const lines: string[] = [];
    try {
      const stream = await this.docker.buildImage({ context: env.contextDir, src: await filesOf(env.contextDir) }, {
        t: tag, dockerfile: env.dockerfile ?? 'Dockerfile', labels: { [LABEL_TASK_HASH]: env.hash }, rm: true, forcerm: true, abortSignal: abort.signal,
      } as Docker.ImageBuildOptions);
      const failure = await new Promise<string | undefined>((resolve, reject) => {
        let error: string | undefined;
        this.docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve(error)), (event: { stream?: string; error?: string; status?: string }) => {
          const text = event.stream ?? (event.status ? `${event.status}\n` : '');
          if (event.error) error = event.error;
          const chunk = event.error ? `ERROR: ${event.error}\n` : text;
          if (chunk) { lines.push(...chunk.split('\n').filter(Boolean)); void log(chunk); }
        });
      });
      if (failure) throw failure; // a step failed: the daemon's own words, wrapped below
      await log(`built ${tag} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    } catch (err) {
      const why = abort.signal.aborted ? `the build ran past build_timeout_sec (${env.buildTimeoutMs! / 1000} s)` : messageOf(err);
      await log(`FAILED: ${why}\n`);
      throw new ClawGymError(ErrorCodes.IMAGE_BUILD_FAILED, `building the image of ${env.source} failed: ${why}\n${lines.slice(-TAIL_LINES).map((l) => `  | ${l}`).join('\n')}`, {
        cause: err, hint: logPath ? `the whole build log is ${logPath}` : 'docker build the environment/ folder by hand to see the whole log',
      });
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /** A tar of the image's WORKDIR (entries under its base name), read once per image from a container that never starts. */
  private async workdirFiles(tag: string, workdir: string, o: { labels: Record<string, string> }): Promise<Buffer> {
    const probe = await this.docker.createContainer({ Image: tag, Cmd: ['true'], Labels: o.labels, HostConfig: { NetworkMode: 'none' } });
    try {
      const stream = await probe.getArchive({ path: workdir }).catch((err: unknown) => {
        if (statusOf(err) === 404) return undefined; // no such folder in the image: an empty workspace
        throw err;
      });
      if (!stream) return Buffer.alloc(0);
      const chunks: Buffer[] = [];
      for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
      return Buffer.concat(chunks);
    } finally {
      await probe.remove({ force: true }).catch(() => undefined);
    }
  }
}
