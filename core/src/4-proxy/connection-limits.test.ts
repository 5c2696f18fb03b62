import { connect, type Socket } from 'node:net';
import type { ChatTemplate } from '../contracts/engine';
import { ScriptedEngine } from './engine/scripted';
import { startScriptedProxy } from '../testing';
import { settle, isSettled } from '../util/settled';
import { TitoLedger } from './ledger';

type P = Awaited<ReturnType<typeof startScriptedProxy>>;

/** A raw connection to the proxy: what it sent back, and when it closed. */
function rawClient(url: string) {
  const { port, hostname } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  let received = '';
  socket.on('data', (d) => { received += d.toString('latin1'); });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  /** Resolves with what was received once it holds `text` (or once the connection closed). */
  const receivedWith = (text: string) => new Promise<string>((resolve) => {
    const check = () => { if (received.includes(text)) { socket.off('data', check); resolve(received); } };
    socket.on('data', check);
    void closed.then(() => resolve(received));
    check();
  });
  return { socket, closed, receivedWith, get received() { return received; } };
}

describe('the proxy bounds what a client can make it hold', () => {
  let p: P;
  let session: ReturnType<P['proxy']['openSession']>;
  beforeAll(async () => {
    p = await startScriptedProxy(() => ({ text: 'ok' }), { headersTimeoutMs: 400, bodyTimeoutMs: 400, maxBodyBytes: 1024 * 1024 });
    session = p.proxy.openSession('limits');
  });
  afterAll(async () => { await p.close(); });
  const head = (length: number, extra = '') => `POST /s/limits/v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: ${session.apiKey}\r\ncontent-type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

  it('a declared Content-Length over the limit is answered 413 before any byte of the body is sent', async () => {
    const c = rawClient(p.url);
    c.socket.write(head(50 * 1024 * 1024));
    // Not a byte of the body is written: the answer can only come from the header.
    const text = await c.receivedWith('\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toContain('over the limit of 1048576');
    c.socket.destroy();
  });

  it('with Expect: 100-continue, an oversized body is refused instead of invited (no 100 Continue)', async () => {
    const c = rawClient(p.url);
    c.socket.write(head(50 * 1024 * 1024, 'Expect: 100-continue\r\n'));
    const text = await c.receivedWith('\r\n\r\n');
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    c.socket.destroy();
  });

  it('a client that stalls in its headers is answered 408 and closed at the header limit', async () => {
    const c = rawClient(p.url);
    c.socket.write(`POST /s/limits/v1/messages HTTP/1.1\r\nHost: x\r\n`);
    await c.closed;
    expect(c.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('a client that stalls in its body is answered 408 and closed at the body limit', async () => {
    const c = rawClient(p.url);
    c.socket.write(`${head(1000)}{"model":`);
    await c.closed;
    expect(c.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(c.received).toContain('did not arrive within 400 ms (9 of 1000 bytes)');
  });

  it('a body sent in time while the proxy itself held the event loop past the body limit is read, not answered 408', async () => {
    const c = rawClient(p.url);
    const body = JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
    // 100 Continue is sent once the proxy is reading the body: its body timer is running.
    c.socket.write(head(Buffer.byteLength(body), 'Expect: 100-continue\r\n'));
    await c.receivedWith('100 Continue');
    c.socket.write(body);
    // The proxy's work (a long tokenization) holds the loop for three times the body limit; the body is in its socket all along.
    const until = performance.now() + 1200;
    while (performance.now() < until) { /* busy */ }
    const text = await c.receivedWith('"type":"message"');
    expect(text).toContain('HTTP/1.1 200 OK');
    expect(text).not.toContain('408');
    c.socket.destroy();
  });

  it('a complete request on the same limits is answered', async () => {
    const res = await fetch(`${session.baseUrl}/v1/messages`, { method: 'POST', headers: { 'x-api-key': session.apiKey }, body: JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.status).toBe(200);
  });
});

describe('recursive walks over client data', () => {
  const deep = (n: number): Record<string, unknown> => { let v: Record<string, unknown> = { type: 'string' }; for (let i = 0; i < n; i++) v = { type: 'object', properties: { a: v } }; return v; };

  it('a tool schema 20,000 levels deep handed to the ledger as a library is refused (400) without a stack overflow', () => {
    const template: ChatTemplate = new ScriptedEngine(() => ({ text: 'ok' })).chatTemplate;
    const ledger = new TitoLedger(template);
    const conversation = { messages: [{ role: 'user' as const, parts: [{ type: 'text' as const, text: 'x' }] }], tools: [{ name: 't', description: '', parameters: deep(20_000) }] };
    let thrown: unknown;
    try { ledger.prepare(conversation); } catch (err) { thrown = err; }
    expect(thrown).not.toBeInstanceOf(RangeError);
    expect(thrown).toMatchObject({ status: 400, message: 'the tool list nests more than 128 levels deep; the limit is 128' });
  });

  it('settle freezes a value 20,000 levels deep without a stack overflow', () => {
    const v = deep(20_000);
    expect(settle(v)).toBe(v);
    let inner: Record<string, unknown> = v;
    for (let i = 0; i < 20_000; i++) inner = (inner.properties as { a: Record<string, unknown> }).a;
    expect([Object.isFrozen(inner), isSettled(inner), Object.isFrozen(v)]).toEqual([true, true, true]);
  });
});
