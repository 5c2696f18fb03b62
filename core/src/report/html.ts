import type { MetricsEvent } from '../contracts/reporter';

/** One chart: named series of [step, value] points. */
export interface Chart {
  id: string;
  title: string;
  yLabel: string;
  series: { name: string; points: [number, number][] }[];
}

const keysLike = (events: readonly MetricsEvent[], prefix: string) =>
  [...new Set(events.flatMap((e) => Object.keys(e.values)).filter((k) => k.startsWith(prefix)))].sort();

function series(events: readonly MetricsEvent[], key: string, name = key): Chart['series'][number] {
  return { name, points: events.filter((e) => typeof e.values[key] === 'number').map((e): [number, number] => [e.step, e.values[key] as number]) };
}

/** The charts of a run: reward and held-out Pass@1 per harness and category, trees, mismatch, throughput. */
export function chartsOf(events: readonly MetricsEvent[]): Chart[] {
  const steps = events.filter((e) => e.kind === 'step');
  const evals = events.filter((e) => e.kind === 'eval');
  return [
    { id: 'reward', title: 'Reward per harness', yLabel: 'mean reward', series: [series(steps, 'reward', 'all'), ...keysLike(steps, 'reward/').map((k) => series(steps, k, k.slice(7)))] },
    { id: 'pass1', title: 'Held-out Pass@1 per harness and category', yLabel: 'Pass@1', series: [series(evals, 'pass1', 'all'), ...keysLike(evals, 'pass1/').map((k) => series(evals, k, k.slice(6)))] },
    { id: 'trees', title: 'Trees: calls, trained rollouts, what the filters removed', yLabel: 'count', series: ['calls', 'trained', 'infra', ...keysLike(steps, 'filter/')].map((k) => series(steps, k)) },
    { id: 'mismatch', title: 'Engine/trainer mismatch and clipping', yLabel: 'value', series: ['train/mismatchAbsLogp', 'train/mismatchKl', 'train/clipFraction'].map((k) => series(steps, k, k.slice(6))) },
    { id: 'throughput', title: 'Throughput', yLabel: 'per second', series: [
      { name: 'rollouts/s', points: steps.filter((e) => typeof e.values.seconds === 'number').map((e): [number, number] => [e.step, (e.values.rollouts as number) / (e.values.seconds as number)]) },
      { name: 'trained tokens/s', points: steps.filter((e) => typeof e.values.seconds === 'number').map((e): [number, number] => [e.step, ((e.values['train/tokens'] as number) ?? 0) / (e.values.seconds as number)]) },
      { name: 'generated tokens/s (rollouts)', points: steps.filter((e) => typeof e.values['seconds/rollouts'] === 'number').map((e): [number, number] => [e.step, (e.values['tokens/generated'] as number) / (e.values['seconds/rollouts'] as number)]) },
    ] },
  ].map((c) => ({ ...c, series: c.series.filter((s) => s.points.length > 0) }));
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]!));

/**
 * A self-contained HTML report: no external files, viewable offline. The charts are drawn as
 * SVG by a small inline script from the embedded data, so a browser test can check they drew.
 */
export function renderReport(title: string, charts: readonly Chart[], summary: Record<string, string>): string {
  const data = JSON.stringify(charts).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}
table{border-collapse:collapse;margin-bottom:16px}td{padding:2px 12px 2px 0}
.chart{display:inline-block;margin:8px 16px 16px 0;vertical-align:top}.chart h2{font-size:14px;margin:0 0 4px}
.legend span{margin-right:12px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
</style></head><body>
<h1>${esc(title)}</h1>
<table>${Object.entries(summary).map(([k, v]) => `<tr><td>${esc(k)}</td><td><b>${esc(v)}</b></td></tr>`).join('')}</table>
<div id="charts"></div>
<script id="data" type="application/json">${data}</script>
<script>
(function () {
  var charts = JSON.parse(document.getElementById('data').textContent);
  var colors = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
  var W = 460, H = 240, L = 48, R = 10, T = 10, B = 28, NS = 'http://www.w3.org/2000/svg';
  function el(name, attrs, parent) { var e = document.createElementNS(NS, name); for (var k in attrs) e.setAttribute(k, attrs[k]); parent.appendChild(e); return e; }
  charts.forEach(function (c) {
    var box = document.createElement('div'); box.className = 'chart'; box.id = 'chart-' + c.id;
    box.innerHTML = '<h2></h2><div class="legend"></div>'; box.querySelector('h2').textContent = c.title;
    document.getElementById('charts').appendChild(box);
    var pts = [].concat.apply([], c.series.map(function (s) { return s.points; }));
    var svg = el('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H }, box);
    if (!pts.length) { el('text', { x: L, y: H / 2 }, svg).textContent = 'no data yet'; return; }
    var xs = pts.map(function (p) { return p[0]; }), ys = pts.map(function (p) { return p[1]; });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs), y0 = Math.min(0, Math.min.apply(null, ys)), y1 = Math.max.apply(null, ys);
    if (x1 === x0) x1 = x0 + 1; if (y1 === y0) y1 = y0 + 1;
    function sx(x) { return L + (x - x0) / (x1 - x0) * (W - L - R); } function sy(y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); }
    el('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#999' }, svg); el('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#999' }, svg);
    [[y0, H - B], [y1, T + 4]].forEach(function (t) { el('text', { x: 4, y: t[1], 'font-size': 10 }, svg).textContent = +t[0].toPrecision(3); });
    el('text', { x: L, y: H - 8, 'font-size': 10 }, svg).textContent = 'step ' + x0; el('text', { x: W - R - 40, y: H - 8, 'font-size': 10 }, svg).textContent = 'step ' + x1;
    c.series.forEach(function (s, i) {
      var color = colors[i % colors.length];
      el('polyline', { fill: 'none', stroke: color, 'stroke-width': 1.5, 'data-series': s.name, points: s.points.map(function (p) { return sx(p[0]).toFixed(1) + ',' + sy(p[1]).toFixed(1); }).join(' ') }, svg);
      s.points.forEach(function (p) { el('circle', { cx: sx(p[0]), cy: sy(p[1]), r: 2, fill: color }, svg); });
      var lg = document.createElement('span'); lg.innerHTML = '<i style="background:' + color + '"></i>'; lg.appendChild(document.createTextNode(s.name)); box.querySelector('.legend').appendChild(lg);
    });
    box.setAttribute('data-drawn', String(c.series.length));
  });
  document.body.setAttribute('data-charts-drawn', String(charts.length));
})();
</script></body></html>
`;
}
