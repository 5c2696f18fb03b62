/**
 * A text buffer that finds markers in streamed text: it hands out text up to a marker, and
 * holds back a tail that could still become one (`<tool_` may be the start of `<tool_call>`).
 */
export class MarkerScanner {
  private buf = '';

  push(text: string): void {
    this.buf += text;
  }

  /** The text before the first of `markers` and that marker, or (no marker yet) the text certain not to start one. */
  next(markers: readonly string[], final = false): { text: string; marker?: string } {
    let at = -1;
    let found: string | undefined;
    for (const m of markers) {
      const i = this.buf.indexOf(m);
      if (i >= 0 && (at < 0 || i < at)) { at = i; found = m; }
    }
    if (found !== undefined) {
      const text = this.buf.slice(0, at);
      this.buf = this.buf.slice(at + found.length);
      return { text, marker: found };
    }
    let keep = 0;
    if (!final) {
      // The longest end of the text that begins a marker: it starts with the marker's first
      // character, so only those places are tried (a token's text rarely holds one), longest first.
      const buf = this.buf;
      for (const m of markers) {
        if (!m) continue;
        for (let p = buf.indexOf(m[0]!, Math.max(0, buf.length - (m.length - 1))); p >= 0 && buf.length - p > keep; p = buf.indexOf(m[0]!, p + 1)) {
          if (m.startsWith(buf.slice(p))) { keep = buf.length - p; break; }
        }
      }
    }
    const text = this.buf.slice(0, this.buf.length - keep);
    this.buf = this.buf.slice(this.buf.length - keep);
    return { text };
  }

  /** Everything still held. */
  rest(): string {
    const r = this.buf;
    this.buf = '';
    return r;
  }
}
