import type { MetricsEvent } from '../contracts/reporter';

const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const num = (x: number, digits = 1) => x.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: x !== 0 && Math.abs(x) < 10 ? Math.min(digits, 1) : 0 });

/** The last event that carries the run's cost totals (`cost/run/…`). */
export function runTotals(events: readonly MetricsEvent[]): Record<string, number> | undefined {
  const last = [...events].reverse().find((e) => typeof e.values['cost/run/sandbox_seconds'] === 'number');
  if (!last) return undefined;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(last.values)) if (k.startsWith('cost/run/') && typeof v === 'number') out[k.slice('cost/run/'.length)] = v;
  return out;
}

/** Money, where there is some, in the run's currency. */
const money = (x: number, currency: string) => `${currency} ${x <= 0 ? '0' : x >= 1 ? x.toFixed(2) : x.toFixed(Math.min(12, 2 - Math.floor(Math.log10(x))))}`;

/**
 * Cost figures (keys without `cost/`) divided by `per`, in one line: sandbox and CPU time,
 * tokens, the trainer's time where there is a trainer, and money where priced.
 */
export function costLine(v: Record<string, number>, per: number, currency: string | undefined): string {
  const f = (k: string) => n(v[k]) / per;
  const cpu = n(v.cpu_measured) > 0 ? ` (CPU ${num(f('sandbox_cpu_seconds'))} s)` : ' (CPU not measured: no cgroup)';
  const parts = [
    `${num(f('sandbox_seconds'))} sandbox-s${cpu}`,
    `${num(f('prompt_tokens_new'), 0)} prompt tokens new + ${num(f('prompt_tokens_reused'), 0)} reused, ${num(f('generated_tokens'), 0)} generated`,
    ...(v.trainer_seconds !== undefined ? [`trainer ${num(f('trainer_seconds'), 2)} s, ${num(f('trainer_tokens'), 0)} tokens`] : [`engine ${num(f('engine_seconds'), 2)} s`]),
  ];
  if (currency && typeof v.money === 'number') parts.push(money(f('money'), currency));
  return parts.join('; ');
}

/**
 * The report's cost lines of one run: per training step (its rollouts, trained or dropped, and
 * the trainer), per reward point (the run's totals over the reward its trained rollouts earned),
 * and the run's totals (held-out evaluations included). Money where the config has prices.
 */
export function costSummary(events: readonly MetricsEvent[], currency: string | undefined, prefix: string): Record<string, string> {
  const steps = events.filter((e) => e.kind === 'step' && typeof e.values['cost/sandbox_seconds'] === 'number');
  const totals = runTotals(events);
  if (!steps.length || !totals) return {};
  const perStep: Record<string, number> = {};
  for (const e of steps) for (const [k, v] of Object.entries(e.values)) if (k.startsWith('cost/') && !k.startsWith('cost/run/') && typeof v === 'number') perStep[k.slice(5)] = (perStep[k.slice(5)] ?? 0) + v;
  const out: Record<string, string> = { [`${prefix}cost per step`]: costLine(perStep, steps.length, currency) };
  const reward = n(totals.reward);
  out[`${prefix}cost per reward point`] = reward > 0 ? `${costLine(totals, reward, currency)} (${reward.toLocaleString('en', { maximumFractionDigits: 2 })} reward points in ${num(n(totals.rollouts), 0)} rollouts)` : 'no reward earned yet';
  out[`${prefix}run cost (held-out evaluations included)`] = costLine(totals, 1, currency);
  return out;
}

/**
 * Held-out Pass@1 at each evaluation against the run's cumulative cost when it was measured:
 * money where the config has prices, else sandbox-hours.
 */
export function pass1ByCost(events: readonly MetricsEvent[], priced: boolean): { points: [number, number][]; xLabel: string } {
  const key = priced ? 'cost/run/money' : 'cost/run/sandbox_seconds';
  const points = events.filter((e) => e.kind === 'eval' && typeof e.values.pass1 === 'number' && typeof e.values[key] === 'number')
    .map((e): [number, number] => [priced ? e.values[key] as number : (e.values[key] as number) / 3600, e.values.pass1 as number]);
  return { points, xLabel: priced ? 'cost' : 'sandbox-h' };
}
