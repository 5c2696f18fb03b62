/* Browser code: these functions' sources are put into the report page as they are (see page.ts).
 * They call only each other (by name, in this file) and nothing from outside. */
/* eslint-disable @typescript-eslint/no-explicit-any */

export function esc(s: unknown): string {
  return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' } as any)[c]);
}

export function fmt(v: number | null, d = 3): string {
  return v === null || v === undefined ? '–' : String(+v.toFixed(d));
}

/** A message or reply part; collapsed when long. */
export function msgBlock(title: string, text: string, cls = ''): string {
  const long = text.length > 600 || text.split('\n').length > 12;
  return long ? `<details class="msg ${cls}"><summary>${esc(title)} · ${text.length.toLocaleString('en')} characters</summary><pre>${esc(text)}</pre></details>`
    : `<div class="msg ${cls}"><div class="who">${esc(title)}</div><pre>${esc(text)}</pre></div>`;
}

/** One model call: how its prompt was made, what the harness added, the reply. */
export function callHtml(c: any): string {
  return `<details class="call" data-call="${c.index}" ${c.index < 3 ? 'open' : ''}><summary><b>call ${c.index}</b> · ${esc(c.role)} · ${esc(c.wire)} · prompt ${c.promptTokens} (new ${c.newTokens}) · output ${c.outputTokens} · ${esc(c.finish)}`
    + ` · <span class="origin ${c.origin.kind}">${esc(c.origin.text)}</span> · drift <span class="drift ${c.drift ? esc(c.drift.class) : ''}">${c.drift ? esc(c.drift.class) : 'not recorded'}</span>`
    + ` · policy v${c.policyVersion} · ${c.ttftMs !== undefined ? `first token ${c.ttftMs} ms, ` : ''}${c.totalMs} ms</summary>`
    + `${c.drift && c.drift.class !== 'clean' ? `<div class="note">drift: ${esc(c.drift.reason)}</div>` : ''}${(c.notes || []).map((n: string) => `<div class="note">${esc(n)}</div>`).join('')}`
    + `<div class="sent"><h4>sent by the harness (new in this call)</h4>${c.messages.length ? c.messages.map((m: any) => msgBlock(`${m.role}${m.kind !== 'text' && m.kind !== m.role ? ` · ${m.kind.replace('_', ' ')}` : ''}`, m.text || '(empty)', m.kind)).join('') : '<div class="none">nothing new: the prompt is the earlier call\'s, reused</div>'}</div>`
    + `<div class="reply"><h4>reply (generated)</h4>${c.reply.length ? c.reply.map((p: any) => msgBlock(p.type.replace('_', ' '), p.text, p.type)).join('') : `<div class="none">no text or tool call: ${c.outputTokens} token(s), ${esc(c.finish)}</div>`}</div></details>`;
}

/** The prefix tree: each node's size, whether it was trained, and its advantage. */
export function treeHtml(t: any, texts: string[] | undefined): string {
  if (!t) return '<div class="none">no tree: the rollout was not trained</div>';
  const depth: number[] = [];
  const nodes = t.nodes.map((n: any) => {
    depth[n.id] = n.parent < 0 ? 0 : depth[n.parent]! + 1;
    const trained = n.kind === 'generated' && n.advantage !== undefined && !n.removedBy && !n.auxiliary && !t.dropped;
    const state = n.kind === 'inserted' ? 'inserted (never trained)' : trained ? 'trained' : `untrained${n.removedBy ? `: ${n.removedBy}` : n.auxiliary ? ': auxiliary' : t.dropped ? ': rollout dropped' : ''}`;
    const adv = n.advantage === undefined ? '' : `<span class="adv ${n.advantage > 0 ? 'pos' : n.advantage < 0 ? 'neg' : ''}">advantage ${fmt(n.advantage, 4)}${n.advantageRange ? ` [${fmt(n.advantageRange[0], 3)}, ${fmt(n.advantageRange[1], 3)}]` : ''}</span>`;
    const text = texts && texts[n.id] !== undefined ? `<details><summary>text</summary><pre>${esc(texts[n.id])}</pre></details>` : '';
    return `<div class="tree-node ${n.kind} ${trained ? 'trained' : 'untrained'}" style="margin-left:${depth[n.id]! * 18}px" data-node="${n.id}"><span class="bar" style="width:${Math.min(240, 4 + Math.sqrt(n.tokens) * 6)}px"></span> node ${n.id} · call ${n.callIndex} · ${n.kind} · ${n.tokens} tokens · ${esc(state)} ${adv}${text}</div>`;
  }).join('');
  return `<div class="tree-sum">${t.trainedTokens} trained tokens, ${t.untrainedTokens} generated tokens untrained${t.dropped ? ` · dropped: ${esc(t.dropped)}` : ''}</div>${nodes}`;
}

/** An opened rollout: facts, the verifier's verdict, every call, the tree. */
export function detailHtml(d: any): string {
  const e = d.entry;
  const ph = e.phases || {};
  const phases = ['sandboxMs', 'setupMs', 'harnessMs', 'recordsMs', 'verifyMs'].filter((k) => ph[k] !== undefined).map((k) => `${k.replace('Ms', '')} ${ph[k]} ms`).join(', ');
  return `<h2>${esc(e.rolloutId)} <a href="#" id="close">close</a></h2>`
    + `<table class="facts"><tr><td>step</td><td>${e.step}</td><td>task</td><td>${esc(e.taskId)} (${esc(e.category)})</td><td>harness</td><td>${esc(e.harness)}</td></tr>`
    + `<tr><td>outcome</td><td>${esc(e.outcome)}${e.infraClass ? ` (${esc(e.infraClass)})` : ''}</td><td>reward</td><td>${fmt(e.reward)}</td><td>pass</td><td>${e.pass === null ? 'not scored' : e.pass ? 'passed' : 'failed'}</td></tr>`
    + `<tr><td>sandbox exit</td><td>${e.exit ? `${e.exit.code === null ? 'killed' : `code ${e.exit.code}`}${e.exit.timedOut ? ', timed out' : ''}` : 'the harness did not run to an end'}</td><td>timings</td><td>${esc(phases || '–')} (${e.durationMs} ms in all)</td><td>lineage</td><td>${e.attempts} attempt(s), policy ${e.policy ? `v${e.policy[0]}${e.policy[1] !== e.policy[0] ? `–v${e.policy[1]}` : ''}` : '–'}${e.trainedAt !== undefined ? `, trained at v${e.trainedAt}` : ''}</td></tr>`
    + `<tr><td>calls</td><td>${e.calls} (TITO: ${e.tito.reuse} reused, ${e.tito.forks} forked, ${e.tito.retry} retries, ${e.tito.side} side)</td><td>drift</td><td>${e.drift.clean} clean, ${e.drift.realigned} realigned, ${e.drift.fork} fork</td><td>tokens</td><td>${e.promptTokens} prompt, ${e.outputTokens} output</td></tr></table>`
    + `<div id="verdict" class="verdict ${e.pass ? 'pass' : 'fail'}"><b>verifier:</b> ${e.verdict !== undefined ? esc(e.verdict) : 'no verdict'}${e.details && e.details !== e.verdict ? `<div class="note">${esc(e.details)}</div>` : ''}</div>`
    + `<div class="cols"><div id="calls"><h3>Model calls</h3>${d.error ? `<div class="error">${esc(d.error)}</div>` : d.calls.map(callHtml).join('')}</div>`
    + `<div id="tree"><h3>Prefix tree</h3>${treeHtml(e.tree, d.nodeText)}</div></div>`;
}
