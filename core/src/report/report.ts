import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { renderPage, dataScript, type ViewerMeta } from './page';
import { indexPages, reportModel, type ReportModel } from './report-model';
import { rolloutDetail, type RolloutDetail } from './rollout-detail';
import { readRollouts } from './rollout-log';
import { runTokenizer } from './run-tokenizer';

/** Runs with at most this many rollouts get one self-contained file; larger ones a data folder beside it. */
export const INLINE_MAX = 1000;
/** Rollouts per detail file of a paged report. */
export const DETAIL_CHUNK = 100;

export interface WriteReportOptions {
  /** The HTML file (default: `<run>/report.html`, or `./compare-<a>-<b>.html` for several runs). */
  out?: string;
  /** `inline`: one file; `files`: data files beside it; default by size ({@link INLINE_MAX}). */
  mode?: 'inline' | 'files';
  /** Where relative paths start (the CLI's folder). */
  cwd?: string;
}

/**
 * Every rollout's details in order of the list, a chunk at a time: each rollout's calls read
 * from its run's call store with that run's tokenizer (a chunk's rollouts read together).
 */
async function eachDetailChunk(model: ReportModel, chunk: number, onChunk: (n: number, payload: Record<number, RolloutDetail>) => Promise<void>): Promise<void> {
  let ord = 0; let n = 0;
  let batch: Promise<[number, RolloutDetail]>[] = [];
  const flush = async () => {
    if (!batch.length) return;
    await onChunk(n++, Object.fromEntries(await Promise.all(batch)));
    batch = [];
  };
  for (const runDir of model.runDirs) {
    const tok = runTokenizer(runDir, undefined, runDir);
    for await (const e of readRollouts(runDir)) {
      const at = ord++;
      batch.push(rolloutDetail(runDir, e, tok).then((d) => [at, d]));
      if (batch.length === chunk) await flush();
    }
  }
  await flush();
}

/**
 * Write the HTML report of one run, or of several overlaid; returns its path. Small runs make
 * one self-contained file; large ones a page that reads its list and rollouts from
 * `<name>-data/` beside it, a file at a time, so a 100,000-rollout run opens as fast as a small
 * one. `clawgym report --serve` serves the same page from the run folder without writing it.
 */
export async function writeReport(runDirArg: string | readonly string[], o: WriteReportOptions = {}): Promise<string> {
  const cwd = o.cwd ?? process.cwd();
  const runDirs = (typeof runDirArg === 'string' ? [runDirArg] : runDirArg).map((d) => resolve(cwd, d));
  const model = await reportModel(runDirs);
  const file = o.out ? resolve(cwd, o.out)
    : runDirs.length === 1 ? join(runDirs[0]!, 'report.html') : resolve(cwd, `compare-${model.names.join('-').replace(/[^\w.-]+/g, '_')}.html`);
  const mode = o.mode ?? (model.index.rows.length <= INLINE_MAX ? 'inline' : 'files');
  const pages = indexPages(model.index);
  const dataDirName = `${basename(file).replace(/\.html?$/, '')}-data`;
  const dataDir = join(dirname(file), dataDirName);
  const meta: ViewerMeta = { mode, dataDir: dataDirName, indexPages: pages.length, detailChunk: DETAIL_CHUNK, total: model.index.rows.length, dicts: model.index.dicts };
  await rm(dataDir, { recursive: true, force: true }); // a data folder of an earlier, larger report
  if (mode === 'inline') {
    const details: unknown[] = [];
    await eachDetailChunk(model, DETAIL_CHUNK, async (_n, p) => { details.push(p); });
    await writeFile(file, renderPage({ title: model.title, summary: model.summary, tables: model.tables, charts: model.charts, meta, inline: { index: pages, details } }));
    return file;
  }
  await mkdir(dataDir, { recursive: true });
  for (const [n, p] of pages.entries()) await writeFile(join(dataDir, `index-${n}.js`), dataScript('index', n, p));
  await eachDetailChunk(model, DETAIL_CHUNK, (n, p) => writeFile(join(dataDir, `detail-${n}.js`), dataScript('detail', n, p)));
  await writeFile(file, renderPage({ title: model.title, summary: model.summary, tables: model.tables, charts: model.charts, meta }));
  return file;
}
