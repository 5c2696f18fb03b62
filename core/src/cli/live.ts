import type { RunProgress } from '../contracts/reporter';

export interface LiveStream {
  write(s: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** The one status line the live display draws. */
export function statusLine(p: RunProgress): string {
  const parts = [
    p.phase === 'eval' ? `eval @ step ${p.step}` : `step ${p.step}/${p.steps}`,
    p.phase === 'update' ? 'updating' : `rollouts ${p.done}/${p.total} (${p.inFlight} running)`,
  ];
  if (p.reward !== undefined && p.phase === 'rollouts' && p.done > 0) parts.push(`reward ${p.reward.toFixed(3)}`);
  if (p.pass1 !== undefined) parts.push(`held-out Pass@1 ${pct(p.pass1)}`);
  if (p.tokensPerSec !== undefined) parts.push(`${Math.round(p.tokensPerSec)} tok/s`);
  if (p.etaSeconds !== undefined) parts.push(`ETA ${formatDuration(p.etaSeconds)}`);
  return parts.join(' · ');
}

/**
 * Progress on a terminal: log lines scroll as usual and one status line stays under them,
 * redrawn in place (at most every `intervalMs`). On anything but a TTY (a pipe, a file, CI) it
 * prints plain lines only: the log lines, and the status as a `progress:` line when nothing was
 * printed for `quietMs` (a held-out evaluation logs nothing until it ends, which took minutes
 * of silence in a CI log).
 */
export class LiveDisplay {
  private status = '';
  private last = 0;
  private pending?: RunProgress;
  private timer?: NodeJS.Timeout;
  /** Off a TTY: when the last line was printed, and the last status printed. */
  private printedAt = Date.now();
  private printed = '';

  constructor(private readonly stream: LiveStream, private readonly intervalMs = 250, private readonly quietMs = 30_000) {}

  get live(): boolean { return this.stream.isTTY === true; }

  /** A log line, above the status line. */
  log(line: string): void {
    if (!this.live) { this.stream.write(`${line}\n`); this.printedAt = Date.now(); return; }
    this.stream.write(`\r\x1b[K${line}\n${this.status}`);
  }

  update(p: RunProgress): void {
    if (!this.live) {
      const line = statusLine(p);
      if (Date.now() - this.printedAt < this.quietMs || line === this.printed) return;
      this.stream.write(`progress: ${line}\n`);
      this.printed = line;
      this.printedAt = Date.now();
      return;
    }
    this.pending = p;
    const wait = this.last + this.intervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => { this.timer = undefined; this.flush(); }, wait);
  }

  /** Remove the status line (at the end of the run). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.live && this.status) this.stream.write('\r\x1b[K');
    this.status = '';
  }

  private flush() {
    if (!this.pending) return;
    // A terminal of unknown size (0 columns, as under `script`) gets 120.
    const width = Math.max(20, (this.stream.columns || 120) - 1);
    this.status = statusLine(this.pending).slice(0, width);
    this.pending = undefined;
    this.last = Date.now();
    this.stream.write(`\r\x1b[K${this.status}`);
  }
}
