import type { Chart } from './charts';
import { drawCharts } from './page-charts';
import { callHtml, detailHtml, esc as escHtml, fmt, msgBlock, treeHtml } from './page-detail';
import { startViewer } from './page-viewer';
import type { DictColumn } from './rollout-index';

/** Where the page finds the rollout list and details. */
export interface ViewerMeta {
  /** `inline`: embedded in the page; `files`: scripts in `dataDir` beside it (or served by `clawgym report --serve`). */
  mode: 'inline' | 'files';
  dataDir: string;
  indexPages: number;
  /** Rollouts per detail file: the file of rollout `ord` is `detail-floor(ord / detailChunk)`. */
  detailChunk: number;
  total: number;
  dicts: Record<DictColumn, string[]>;
}

/** JSON safe inside a script element. */
export const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

/** A data file of the paged report: a script that hands its payload to the page. */
export const dataScript = (kind: 'index' | 'detail', n: number, payload: unknown) => `CLAWGYM_DATA(${JSON.stringify(kind)},${n},${scriptJson(payload)});\n`;

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]!));

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px}h3{font-size:14px;margin:8px 0}h4{font-size:12px;margin:6px 0 2px;color:#555}
table{border-collapse:collapse;margin-bottom:16px}td,th{padding:2px 10px 2px 0;text-align:left}
.chart{display:inline-block;margin:8px 16px 16px 0;vertical-align:top}.chart h2{font-size:13px;margin:0 0 4px;max-width:440px}
.legend span{margin-right:12px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
#filters label{margin-right:10px;font-size:12px;display:inline-block;margin-bottom:4px}#filters select,#filters input{margin-left:4px;font-size:12px}
#rollouts table{font-size:12px;width:100%}#rollouts th{border-bottom:1px solid #ccc}
#rollout-rows tr{cursor:pointer}#rollout-rows tr:hover{background:#eef4ff}tr.o-infra-error td{color:#a33}
#detail{border-top:2px solid #444;margin-top:16px;padding-top:8px}.facts td:nth-child(odd){color:#666}
.verdict{padding:6px 8px;margin:8px 0;border-left:4px solid #c33;background:#fdf3f3}.verdict.pass{border-color:#2a2;background:#f2fbf2}
.cols{display:flex;gap:24px;align-items:flex-start}#calls{flex:3;min-width:0}#tree{flex:2;min-width:0}
.call{border:1px solid #ddd;border-radius:4px;margin:6px 0;padding:4px 8px}.call>summary{cursor:pointer;font-size:12px}
.msg{margin:4px 0;border-left:3px solid #ccc;padding-left:6px}.msg .who,.msg summary{font-size:11px;color:#555}.msg.tool_call,.msg.tool_result{border-color:#d90}.msg.system{border-color:#99c}
.reply .msg{border-color:#36c}.msg.thinking{border-color:#aaa;color:#666}
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font-size:12px;max-height:400px;overflow:auto}
.origin.fork,.drift.fork{color:#c33}.drift.realigned{color:#d80}.origin.reuse{color:#2a2}.note{font-size:12px;color:#a60}.none{font-size:12px;color:#888}.error{color:#c33}
.tree-node{font-size:12px;margin:2px 0;padding:2px 4px;border-left:3px solid #bbb}.tree-node.generated.trained{border-color:#2a2;background:#f2fbf2}.tree-node.generated.untrained{border-color:#c93;background:#fbf6ee}
.tree-node .bar{display:inline-block;height:8px;background:#bbb;vertical-align:middle}.tree-node.trained .bar{background:#2a2}.tree-sum{font-size:12px;margin-bottom:4px}
.adv.pos{color:#080;font-weight:600}.adv.neg{color:#c00;font-weight:600}
`;

/**
 * The report page: the run's summary and charts, and the rollout viewer. With `inline` data it
 * is one self-contained file (no external reference); otherwise it reads its data files, which
 * also load from file:// (scripts, not fetches).
 */
export function renderPage(o: { title: string; summary: Record<string, string>; tables?: readonly { title: string; rows: readonly (readonly [string, string])[] }[]; charts: readonly Chart[]; meta: ViewerMeta; inline?: { index: unknown[]; details: unknown[] } }): string {
  const inline = o.inline
    ? [...o.inline.index.map((p, n) => `<script type="application/json" id="cg-index-${n}">${scriptJson(p)}</script>`),
      ...o.inline.details.map((p, n) => `<script type="application/json" id="cg-detail-${n}">${scriptJson(p)}</script>`)].join('\n')
    : '';
  const runCol = o.meta.dicts.run.length > 1 ? '<th>run</th>' : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(o.title)}</title><style>${STYLE}</style></head><body>
<h1>${esc(o.title)}</h1>
<table id="summary">${Object.entries(o.summary).map(([k, v]) => `<tr><td>${esc(k)}</td><td><b>${esc(v)}</b></td></tr>`).join('')}</table>
${(o.tables ?? []).map((t) => `<details class="facts-table"><summary>${esc(t.title)}</summary><table>${t.rows.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join('')}</table></details>`).join('\n')}
<div id="charts"></div>
<section id="rollouts"><h2>Rollouts</h2><div id="filters"></div>
<div><button id="prev">‹ previous</button> <button id="next">next ›</button> <span id="list-count">loading…</span></div>
<table><thead><tr><th>rollout</th><th>step</th>${runCol}<th>task</th><th>category</th><th>harness</th><th>reward</th><th>pass</th><th>outcome</th><th>calls</th><th>TITO reuse</th><th>drift</th><th>lineage</th><th>trained tokens</th><th>advantage</th></tr></thead>
<tbody id="rollout-rows"></tbody></table></section>
<section id="detail" hidden></section>
<script id="cg-charts" type="application/json">${scriptJson(o.charts)}</script>
<script id="cg-meta" type="application/json">${scriptJson(o.meta)}</script>
${inline}
<script>
(${drawCharts.toString()})(JSON.parse(document.getElementById('cg-charts').textContent));
${[escHtml, fmt, msgBlock, callHtml, treeHtml, detailHtml].map((f) => f.toString()).join('\n')}
(${startViewer.toString()})(JSON.parse(document.getElementById('cg-meta').textContent), { detailHtml });
</script></body></html>
`;
}
