import type { OutputEvent } from '@clawgym/core';
import { MarkerScanner } from './scanner';
import { textEvent } from './types';

/**
 * The text and `<think>` part every family with inline reasoning shares. Templates write
 * reasoning as `<think>\n…\n</think>\n\n` and the text after it without leading newlines, so
 * those newlines are markup: they are left out, and a history echoed back renders the same.
 * A trailing newline run of the text is held until it is known whether a call marker follows
 * (Qwen3 writes `text\n<tool_call>`).
 */
export class ReasoningText {
  readonly scanner = new MarkerScanner();
  mode: 'text' | 'think' = 'text';
  private atStart = true;
  private heldNewlines = '';

  constructor(startInReasoning = false) {
    if (startInReasoning) this.mode = 'think';
  }

  /** Emit `text` of the current mode, trimming the markup newlines. */
  emit(text: string): OutputEvent[] {
    let t = text;
    if (this.atStart) { t = t.replace(/^\n+/, ''); if (t) this.atStart = false; }
    if (!t) return [];
    const m = /\n+$/.exec(t);
    const body = this.heldNewlines + (m ? t.slice(0, m.index) : t);
    this.heldNewlines = m ? m[0] : '';
    return textEvent(this.mode === 'think' ? 'thinking' : 'text', body);
  }

  /** A marker ends the current run: held newlines before it are markup when `dropNewline`. */
  close(dropNewline: number): OutputEvent[] {
    const held = this.heldNewlines.slice(dropNewline);
    this.heldNewlines = '';
    return textEvent(this.mode === 'think' ? 'thinking' : 'text', held);
  }

  /** Switch mode after a marker; the next run starts with its markup newlines trimmed. */
  switchTo(mode: 'text' | 'think'): void {
    this.mode = mode;
    this.atStart = true;
  }

  /** At the end, held newlines of text are the model's (kept); of reasoning, markup. */
  flush(): OutputEvent[] {
    return this.close(this.mode === 'think' ? Infinity : 0);
  }
}
