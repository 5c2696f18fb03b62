/* Browser code: this function's source is put into the report page as it is (see page.ts). It may
 * use nothing from outside itself: no imports, no helpers of the compiler. */
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const window: any;

/**
 * The rollout viewer: loads the list (embedded, or page by page from data files beside the page
 * or from `clawgym report --serve`), filters it, and opens a rollout's details on demand.
 * `meta` says where the data is: { mode, dataDir, indexPages, detailChunk, total, dicts }; `ui`
 * draws an opened rollout (page-detail.ts).
 */
export function startViewer(meta: any, ui: { detailHtml: (d: any) => string }): void {
  const $ = (id: string) => document.getElementById(id);
  const esc = (s: unknown) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' } as any)[c]);
  const D = meta.dicts;
  const C = { ord: 0, id: 1, step: 2, run: 3, task: 4, category: 5, harness: 6, reward: 7, pass: 8, outcome: 9, infra: 10, drift: 11, lineage: 12, calls: 13, out: 14, reuse: 15, trained: 16, adv: 17 };
  const rows: any[] = [];
  let shown: any[] = [];
  let page = 0;
  const PAGE = 50;

  // Data: embedded JSON parsed on demand, or a script per file (works from file:// too).
  const pending: Record<string, (v: any) => void> = {};
  window.CLAWGYM_DATA = (kind: string, n: number, payload: any) => { const k = `${kind}-${n}`; if (pending[k]) { pending[k](payload); delete pending[k]; } };
  const load = (kind: string, n: number): Promise<any> => {
    if (meta.mode === 'inline') return Promise.resolve(JSON.parse($(`cg-${kind}-${n}`).textContent));
    return new Promise((res, rej) => {
      pending[`${kind}-${n}`] = res;
      const s = document.createElement('script');
      s.src = `${meta.dataDir}/${kind}-${n}.js`;
      s.onerror = () => rej(new Error(`could not load ${s.src}`));
      s.onload = () => s.remove();
      document.head.appendChild(s);
    });
  };

  // Filters: one control per column, built from the dictionaries.
  const selects = ['run', 'category', 'harness', 'outcome', 'infra', 'drift', 'lineage'];
  const bar = $('filters');
  const opt = (v: string, t: string) => `<option value="${esc(v)}">${esc(t)}</option>`;
  for (const col of selects) {
    if (col === 'run' && D.run.length < 2) continue;
    bar.insertAdjacentHTML('beforeend', `<label>${col}<select id="f-${col}">${opt('', 'any')}${D[col].map((v: string, i: number) => opt(String(i), v)).join('')}</select></label>`);
  }
  bar.insertAdjacentHTML('beforeend', `<label>pass<select id="f-pass">${opt('', 'any')}${opt('1', 'passed')}${opt('0', 'failed')}${opt('n', 'not scored')}</select></label>`
    + '<label>task<input id="f-task" size="14" placeholder="contains"></label><label>step<input id="f-step-min" size="4" placeholder="from">–<input id="f-step-max" size="4" placeholder="to"></label>'
    + '<label>reward<input id="f-reward-min" size="4" placeholder="min">–<input id="f-reward-max" size="4" placeholder="max"></label>');
  const num = (id: string) => { const v = $(id).value.trim(); return v === '' ? undefined : Number(v); };
  const predicate = () => {
    const eq = selects.filter((c) => $(`f-${c}`) && $(`f-${c}`).value !== '').map((c) => [(C as any)[c], Number($(`f-${c}`).value)]);
    const pass = $('f-pass').value; const task = $('f-task').value.trim().toLowerCase();
    const s0 = num('f-step-min'); const s1 = num('f-step-max'); const r0 = num('f-reward-min'); const r1 = num('f-reward-max');
    return (r: any) => eq.every(([c, v]) => r[c] === v)
      && (pass === '' || (pass === 'n' ? r[C.pass] === null : r[C.pass] === Number(pass)))
      && (!task || D.task[r[C.task]].toLowerCase().includes(task))
      && (s0 === undefined || r[C.step] >= s0) && (s1 === undefined || r[C.step] <= s1)
      && (r0 === undefined || (r[C.reward] !== null && r[C.reward] >= r0)) && (r1 === undefined || (r[C.reward] !== null && r[C.reward] <= r1));
  };
  const fmt = (v: number | null, d = 3) => (v === null || v === undefined ? '–' : String(+v.toFixed(d)));
  const renderList = () => {
    const from = page * PAGE; const list = shown.slice(from, from + PAGE);
    $('rollout-rows').innerHTML = list.map((r) => `<tr data-ord="${r[C.ord]}" class="${r[C.outcome] !== undefined ? `o-${esc(D.outcome[r[C.outcome]])}` : ''}">`
      + `<td>${esc(r[C.id])}</td><td>${r[C.step]}</td>${D.run.length > 1 ? `<td>${esc(D.run[r[C.run]])}</td>` : ''}<td>${esc(D.task[r[C.task]])}</td><td>${esc(D.category[r[C.category]])}</td><td>${esc(D.harness[r[C.harness]])}</td>`
      + `<td>${fmt(r[C.reward])}</td><td>${r[C.pass] === null ? '–' : r[C.pass] ? '✓' : '✗'}</td><td>${esc(D.outcome[r[C.outcome]])}${r[C.infra] !== D.infra.indexOf('-') ? ` (${esc(D.infra[r[C.infra]])})` : ''}</td>`
      + `<td>${r[C.calls]}</td><td>${r[C.reuse] < 0 ? '–' : `${r[C.reuse]}%`}</td><td>${esc(D.drift[r[C.drift]])}</td><td>${esc(D.lineage[r[C.lineage]])}</td><td>${r[C.trained]}</td><td>${fmt(r[C.adv])}</td></tr>`).join('');
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    $('list-count').textContent = `${shown.length.toLocaleString('en')} of ${rows.length.toLocaleString('en')} rollouts match${rows.length < meta.total ? ` (${rows.length.toLocaleString('en')} of ${meta.total.toLocaleString('en')} loaded)` : ''} · page ${page + 1} of ${pages}`;
    $('list-count').setAttribute('data-matching', String(shown.length));
  };
  const refilter = () => { const p = predicate(); shown = rows.filter(p); page = 0; renderList(); };
  bar.addEventListener('input', refilter);
  $('prev').onclick = () => { if (page > 0) { page--; renderList(); } };
  $('next').onclick = () => { if ((page + 1) * PAGE < shown.length) { page++; renderList(); } };
  $('rollout-rows').addEventListener('click', (ev: any) => { const tr = ev.target.closest('tr[data-ord]'); if (tr) window.location.hash = `rollout=${tr.getAttribute('data-ord')}`; });

  const showDetail = (d: any, ord: number) => {
    $('detail').setAttribute('data-ord', String(ord));
    $('detail').innerHTML = ui.detailHtml(d);
    $('close').onclick = (ev: any) => { ev.preventDefault(); window.location.hash = ''; };
    $('detail').hidden = false;
    $('detail').scrollIntoView();
  };
  const openFromHash = () => {
    const m = /rollout=(\d+)/.exec(window.location.hash);
    if (!m) { $('detail').hidden = true; return; }
    const ord = Number(m[1]);
    const chunk = Math.floor(ord / meta.detailChunk);
    $('detail').hidden = false; $('detail').innerHTML = `<h2>loading rollout ${ord}…</h2>`;
    load('detail', chunk).then((p) => { if (p[ord]) showDetail(p[ord], ord); else $('detail').innerHTML = `<h2>no rollout ${ord} in this report</h2>`; })
      .catch((err) => { $('detail').innerHTML = `<h2 class="error">${esc(err.message)}</h2>`; });
  };
  window.addEventListener('hashchange', openFromHash);

  // The list, page by page: the first page shows as soon as it is in.
  const next = (n: number): Promise<void> => (n >= meta.indexPages ? Promise.resolve() : load('index', n).then((p) => {
    for (const r of p.rows) rows.push(r);
    const f = predicate(); shown = rows.filter(f); renderList();
    if (n === 0) { document.body.setAttribute('data-list-ready', '1'); openFromHash(); }
    return next(n + 1);
  }));
  next(0).then(() => { document.body.setAttribute('data-list-loaded', String(rows.length)); renderList(); })
    .catch((err) => { $('list-count').textContent = `the rollout list could not be loaded: ${err.message}`; });
  if (!meta.indexPages) { document.body.setAttribute('data-list-ready', '1'); document.body.setAttribute('data-list-loaded', '0'); renderList(); }
}
