/* Browser code: this function's source is put into the report page as it is (see page.ts). It may
 * use nothing from outside itself: no imports, no helpers of the compiler. */
declare const document: any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Draws the report's charts as SVG into `#charts`, from the charts' data; marks each drawn. */
export function drawCharts(charts: any[]): void { // eslint-disable-line @typescript-eslint/no-explicit-any
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
  const W = 440; const H = 220; const L = 48; const R = 10; const T = 10; const B = 28; const NS = 'http://www.w3.org/2000/svg';
  const el = (name: string, attrs: Record<string, unknown>, parent: any) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const e = document.createElementNS(NS, name);
    for (const k of Object.keys(attrs)) e.setAttribute(k, String(attrs[k]));
    parent.appendChild(e);
    return e;
  };
  for (const c of charts) {
    const box = document.createElement('div'); box.className = 'chart'; box.id = `chart-${c.id}`;
    box.innerHTML = '<h2></h2><div class="legend"></div>'; box.querySelector('h2').textContent = c.title;
    document.getElementById('charts').appendChild(box);
    const svg = el('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}` }, box);
    const pts: number[][] = [];
    for (const s of c.series) s.points.forEach((p: number[], i: number) => { pts.push(p); if (s.err) { pts.push([p[0]!, p[1]! - s.err[i]]); pts.push([p[0]!, p[1]! + s.err[i]]); } });
    if (!pts.length) { el('text', { x: L, y: H / 2, fill: '#888' }, svg).textContent = 'no data in this run'; box.setAttribute('data-drawn', '0'); continue; }
    const xs = pts.map((p) => p[0]!); const ys = pts.map((p) => p[1]!);
    let x0 = Math.min(...xs); let x1 = Math.max(...xs); const y0 = Math.min(0, ...ys); let y1 = Math.max(...ys);
    if (x1 === x0) { x0 -= 0.5; x1 += 0.5; }
    if (y1 === y0) y1 = y0 + 1;
    const sx = (x: number) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
    const sy = (y: number) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
    el('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#999' }, svg); el('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#999' }, svg);
    el('text', { x: 4, y: H - B, 'font-size': 10 }, svg).textContent = String(+y0.toPrecision(3));
    el('text', { x: 4, y: T + 4, 'font-size': 10 }, svg).textContent = String(+y1.toPrecision(3));
    const xl = c.xLabel ?? 'step';
    const xt = (x: number) => `${xl} ${xl === 'step' ? +x.toFixed(1) : +x.toPrecision(3)}`;
    el('text', { x: L, y: H - 8, 'font-size': 10 }, svg).textContent = xt(x0);
    el('text', { x: W - R - 70, y: H - 8, 'font-size': 10 }, svg).textContent = xt(x1);
    let color = 0;
    c.series.forEach((s: any) => { // eslint-disable-line @typescript-eslint/no-explicit-any
      const col = colors[(s.raw ? color : color++) % colors.length];
      const line = s.points.map((p: number[]) => `${sx(p[0]!).toFixed(1)},${sy(p[1]!).toFixed(1)}`).join(' ');
      el('polyline', { fill: 'none', stroke: col, 'stroke-width': s.raw ? 1 : 1.8, 'stroke-opacity': s.raw ? 0.35 : 1, 'data-series': s.name, points: line }, svg);
      // A dot per point only where dots can be told apart: a 1,500-step run draws lines.
      const dots = s.points.length <= 150;
      s.points.forEach((p: number[], i: number) => {
        if (dots) el('circle', { cx: sx(p[0]!), cy: sy(p[1]!), r: s.raw ? 1.5 : 2.2, fill: col, 'fill-opacity': s.raw ? 0.4 : 1 }, svg);
        if (s.err && s.err[i] > 0) el('line', { class: 'err', x1: sx(p[0]!), x2: sx(p[0]!), y1: sy(p[1]! - s.err[i]), y2: sy(p[1]! + s.err[i]), stroke: col, 'stroke-width': 1.2 }, svg);
      });
      if (s.raw) return;
      const lg = document.createElement('span'); lg.innerHTML = `<i style="background:${col}"></i>`; lg.appendChild(document.createTextNode(s.name));
      box.querySelector('.legend').appendChild(lg);
    });
    box.setAttribute('data-drawn', String(c.series.length));
  }
  document.body.setAttribute('data-charts-drawn', String(charts.length));
}
