import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { ClawGymError, ErrorCodes } from '../errors';
import { dataScript, renderPage, type ViewerMeta } from './page';
import { indexPages, reportModel } from './report-model';
import { rolloutDetail } from './rollout-detail';
import type { RolloutEntry } from './rollout-log';
import { runTokenizer } from './run-tokenizer';

export interface ReportServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `clawgym report --serve`: the report of one run (or several overlaid) served on loopback,
 * reading the run folder as the page asks. The list is read once at start; a rollout's calls
 * are read from the call store when it is opened, so the largest run opens in the time its
 * rollout log takes to read, and nothing is written into the run folder.
 */
export async function serveReport(runDirArgs: readonly string[], o: { port?: number; host?: string; cwd?: string } = {}): Promise<ReportServer> {
  const host = o.host ?? '127.0.0.1';
  if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(host)) {
    throw new ClawGymError(ErrorCodes.USAGE, `the report server listens on loopback only, not ${host}`, { hint: 'Leave --host out (127.0.0.1), or copy a written report (clawgym report <run>) to where it is needed.' });
  }
  const runDirs = runDirArgs.map((d) => resolve(o.cwd ?? process.cwd(), d));
  const entries: { e: RolloutEntry; run: number }[] = [];
  const model = await reportModel(runDirs, (e, _ord, run) => { entries.push({ e, run }); });
  const tokenizers = runDirs.map((d) => runTokenizer(d, undefined, d));
  const pages = indexPages(model.index);
  const meta: ViewerMeta = { mode: 'files', dataDir: 'data', indexPages: pages.length, detailChunk: 1, total: model.index.rows.length, dicts: model.index.dicts };
  const html = renderPage({ title: model.title, summary: model.summary, tables: model.tables, charts: model.charts, meta });
  const server: Server = createServer((req, res) => {
    const send = (status: number, type: string, body: string) => { res.writeHead(status, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' }); res.end(body); };
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method !== 'GET') return send(405, 'text/plain', 'only GET\n');
    if (path === '/' || path === '/index.html') return send(200, 'text/html', html);
    const m = /^\/data\/(index|detail)-(\d+)\.js$/.exec(path);
    if (!m) return send(404, 'text/plain', `no ${path} here: the report is at /\n`);
    const n = Number(m[2]);
    if (m[1] === 'index') return pages[n] ? send(200, 'text/javascript', dataScript('index', n, pages[n])) : send(404, 'text/plain', `no list page ${n}\n`);
    const at = entries[n];
    if (!at) return send(404, 'text/plain', `no rollout ${n}\n`);
    rolloutDetail(runDirs[at.run]!, at.e, tokenizers[at.run]!)
      .then((d) => send(200, 'text/javascript', dataScript('detail', n, { [n]: d })))
      .catch((err: Error) => send(500, 'text/plain', `rollout ${n} could not be read: ${err.message}\n`));
  });
  await new Promise<void>((res, rej) => { server.once('error', rej); server.listen(o.port ?? 0, host, () => res()); });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    close: () => new Promise<void>((res) => { server.closeAllConnections(); server.close(() => res()); }),
  };
}
