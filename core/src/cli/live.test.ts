import { LiveDisplay, formatDuration, statusLine } from './live';
import type { RunProgress } from '../contracts/reporter';

const sink = (isTTY: boolean) => {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 200, write: (s: string) => writes.push(s) } };
};
const p: RunProgress = { phase: 'rollouts', step: 3, steps: 20, done: 12, inFlight: 4, total: 64, reward: 0.4166, pass1: 0.35, tokensPerSec: 1234.4, etaSeconds: 754 };

describe('live progress display', () => {
  it('shows step, rollouts in flight and done, reward, held-out Pass@1, tokens/s and ETA in one line', () => {
    expect(statusLine(p)).toBe('step 3/20 · rollouts 12/64 (4 running) · reward 0.417 · held-out Pass@1 35.0% · 1234 tok/s · ETA 12m34s');
    expect(statusLine({ ...p, phase: 'eval', step: 0, pass1: undefined, tokensPerSec: undefined, etaSeconds: undefined })).toBe('eval @ step 0 · rollouts 12/64 (4 running)');
    expect(statusLine({ ...p, phase: 'update' })).toContain('step 3/20 · updating');
    expect(formatDuration(3 * 3600 + 61)).toBe('3h01m');
    expect(formatDuration(9.4)).toBe('9s');
  });

  it('on a TTY redraws the status line in place and keeps it under each log line', () => {
    const { writes, stream } = sink(true);
    const d = new LiveDisplay(stream, 0);
    d.update(p);
    expect(writes.at(-1)).toBe(`\r\x1b[K${statusLine(p)}`);
    d.log('12:00:00  step 3/20: reward 0.417');
    expect(writes.at(-1)).toBe(`\r\x1b[K12:00:00  step 3/20: reward 0.417\n${statusLine(p)}`);
    d.close();
    expect(writes.at(-1)).toBe('\r\x1b[K');
  });

  it('redraws at most once per interval, and always with the newest progress', async () => {
    const { writes, stream } = sink(true);
    const d = new LiveDisplay(stream, 50);
    for (let i = 1; i <= 20; i++) d.update({ ...p, done: i });
    expect(writes).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 80));
    expect(writes).toHaveLength(2);
    expect(writes[1]).toContain('rollouts 20/64');
    d.close();
  });

  it('prints plain log lines and no status line when not on a TTY', () => {
    const { writes, stream } = sink(false);
    const d = new LiveDisplay(stream, 0);
    d.update(p);
    d.log('step 1/20: reward 0.5');
    d.close();
    expect(writes).toEqual(['step 1/20: reward 0.5\n']);
  });

  it('off a TTY prints the status as a plain line when nothing was printed for a while, never twice the same', async () => {
    const { writes, stream } = sink(false);
    const d = new LiveDisplay(stream, 0, 40);
    d.update(p);
    expect(writes).toEqual([]);
    await new Promise((r) => setTimeout(r, 60));
    d.update({ ...p, phase: 'eval', step: 0 });
    expect(writes).toEqual([`progress: ${statusLine({ ...p, phase: 'eval', step: 0 })}\n`]);
    d.update({ ...p, phase: 'eval', step: 0, done: 13 });
    expect(writes).toHaveLength(1); // quiet again only 40 ms later
    await new Promise((r) => setTimeout(r, 60));
    d.update({ ...p, phase: 'eval', step: 0 });
    expect(writes).toHaveLength(1); // the same status as printed last
    d.log('held-out Pass@1 35.0%');
    d.update({ ...p, done: 20 });
    expect(writes).toHaveLength(2); // a log line just now
    d.close();
  });
});
