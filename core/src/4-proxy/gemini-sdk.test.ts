import type { Content, GenerateContentResponse } from '@google/genai' with { 'resolution-mode': 'require' };

// The package is an ES module with a CommonJS build: required, as jest runs this file as CommonJS.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { GoogleGenAI } = require('@google/genai') as typeof import('@google/genai', { with: { 'resolution-mode': 'require' } });
import { startScriptedProxy } from '../testing';
import type { ScriptedTurn } from './engine/scripted';

// The client is @google/genai as installed (the devDependency ^1.30.0: 1.52.0 at this writing);
// Gemini CLI 0.61.0 bundles 1.30.0 (its requests say `x-goog-api-client: google-genai-sdk/1.30.0`),
// and the CLI itself runs end to end in its e2e test. Google's server is not open source: what it
// accepts and refuses here is read from that SDK's types and from the requests the CLI sent; the
// CLI itself runs against the proxy in plugins/harness-gemini-cli/src/gemini-cli.e2e.test.ts.

type Proxy = Awaited<ReturnType<typeof startScriptedProxy>>;

const script = ({ callIndex, prompt }: { callIndex: number; prompt: string }): ScriptedTurn =>
  (/JSON schema/.test(prompt) ? { text: '{"title":"Hello"}' }
    : callIndex === 0 ? { thinking: 'No file yet.', text: 'Writing it.', toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'hi' } }] }
      : { text: 'done, the file is written' });

const tools = [{
  functionDeclarations: [{
    name: 'write_file', description: 'Write a file',
    parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
  }],
}];

let p: Proxy;
beforeAll(async () => { p = await startScriptedProxy(script); });
afterAll(async () => { await p.close(); });

const client = (id: string, key?: string) => {
  const s = p.proxy.openSession(id);
  return new GoogleGenAI({ apiKey: key ?? s.apiKey, httpOptions: { baseUrl: s.baseUrl } });
};

/** The second turn: the model's content as returned, the function's response as Gemini CLI sends it. */
function secondTurn(first: Content, model: Content): Content[] {
  const call = model.parts!.find((x) => x.functionCall)!.functionCall!;
  return [first, model, { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: 'wrote a.txt' } } }] }];
}

async function expectReuse(rolloutId: string) {
  const records = await p.store.read(rolloutId);
  expect(records.map((r) => r.wireFormat)).toEqual(['gemini-generate-content', 'gemini-generate-content']);
  expect(records[1]!.origin).toEqual({ kind: 'reuse', parentCall: 0, reusedTokens: records[0]!.promptIds.length + records[0]!.outputIds.length });
  return records;
}

describe('Gemini generateContent with @google/genai', () => {
  it('answers non-streamed: thought, text and a function call with an id, then text after the function response, with reuse', async () => {
    const c = client('gem-json');
    const user: Content = { role: 'user', parts: [{ text: 'write a.txt' }] };
    const first = await c.models.generateContent({ model: 'policy', contents: [user], config: { tools, systemInstruction: 'You write files.' } });
    expect(first.candidates![0]!.finishReason).toBe('STOP');
    expect(first.functionCalls).toEqual([{ id: expect.stringMatching(/^call_/), name: 'write_file', args: { path: 'a.txt', content: 'hi' } }]);
    // (The test template's parser keeps the newlines around the reasoning and after it.)
    expect(first.candidates![0]!.content!.parts![0]).toEqual({ text: expect.stringMatching(/^\s*No file yet\.\s*$/), thought: true });
    expect(first.text!.trim()).toBe('Writing it.');
    expect(first.usageMetadata!.promptTokenCount).toBeGreaterThan(0);
    const second = await c.models.generateContent({ model: 'policy', contents: secondTurn(user, first.candidates![0]!.content!), config: { tools, systemInstruction: 'You write files.' } });
    expect(second.text).toBe('done, the file is written');
    const records = await expectReuse('gem-json');
    expect(records[0]!.requestedModel).toBe('policy');
  });

  it('streams (alt=sse): text in several chunks, the call whole, the finish reason and usage on the last chunk', async () => {
    const c = client('gem-sse');
    const user: Content = { role: 'user', parts: [{ text: 'write a.txt' }] };
    const chunks: GenerateContentResponse[] = [];
    for await (const chunk of await c.models.generateContentStream({ model: 'policy', contents: [user], config: { tools } })) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(2);
    const last = chunks[chunks.length - 1]!;
    expect(last.candidates![0]!.finishReason).toBe('STOP');
    expect(last.usageMetadata!.candidatesTokenCount).toBeGreaterThan(0);
    expect(chunks.slice(0, -1).every((ch) => ch.candidates![0]!.finishReason === undefined)).toBe(true);
    // Every chunk holds one part that is not an empty text (Gemini CLI drops such a chunk as invalid).
    expect(chunks.every((ch) => ch.candidates![0]!.content!.parts!.length === 1 && ch.candidates![0]!.content!.parts![0]!.text !== '')).toBe(true);
    const parts = chunks.flatMap((ch) => ch.candidates![0]!.content!.parts!);
    expect(parts.filter((x) => x.text !== undefined && !x.thought).map((x) => x.text).join('').trim()).toBe('Writing it.');
    expect(parts.filter((x) => x.thought).map((x) => x.text).join('').trim()).toBe('No file yet.');
    const call = parts.find((x) => x.functionCall)!;
    // What Gemini CLI keeps in its history: the parts as they came, merged into one model turn.
    const text = parts.filter((x) => x.text !== undefined && !x.thought).map((x) => x.text).join('');
    const model: Content = { role: 'model', parts: [{ text }, call] };
    const again: GenerateContentResponse[] = [];
    for await (const chunk of await c.models.generateContentStream({ model: 'policy', contents: secondTurn(user, model), config: { tools } })) again.push(chunk);
    expect(again.map((ch) => ch.text ?? '').join('')).toBe('done, the file is written');
    await expectReuse('gem-sse');
  });

  it('counts tokens, tells the schema of a JSON reply to the model and checks the reply, and refuses Google-hosted tools with a note', async () => {
    const c = client('gem-misc');
    const counted = await c.models.countTokens({ model: 'policy', contents: [{ role: 'user', parts: [{ text: 'hello' }] }] });
    expect(counted.totalTokens).toBeGreaterThan(0);
    const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };
    const r = await c.models.generateContent({
      model: 'policy', contents: [{ role: 'user', parts: [{ text: 'name it' }] }],
      config: { responseMimeType: 'application/json', responseJsonSchema: schema, tools: [{ googleSearch: {} }] },
    });
    expect(JSON.parse(r.text!)).toEqual({ title: 'Hello' });
    const [record] = await p.store.read('gem-misc');
    expect(record!.notes).toEqual(expect.arrayContaining([expect.stringContaining('googleSearch'), expect.stringContaining('follows')]));
    expect(record!.role).toBe('title');
  });

  it('refuses what the API refuses, in its error shape: no contents, an unknown role, two candidates, a wrong key', async () => {
    const s = p.proxy.openSession('gem-refuse');
    const post = (body: unknown, key = s.apiKey) => fetch(`${s.baseUrl}/v1beta/models/policy:generateContent`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key }, body: JSON.stringify(body),
    });
    const cases: [unknown, string][] = [
      [{}, 'contents'],
      [{ contents: [{ role: 'assistant', parts: [{ text: 'hi' }] }] }, 'role'],
      [{ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { candidateCount: 2 } }, 'candidateCount'],
    ];
    for (const [body, word] of cases) {
      const r = await post(body);
      expect(r.status).toBe(400);
      const e = (await r.json()) as { error: { code: number; status: string; message: string } };
      expect(e.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      expect(e.error.message).toContain(word);
    }
    const wrong = await post({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, 'nope');
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
    await expect(client('gem-refuse-sdk', 'nope').models.generateContent({ model: 'policy', contents: 'hi' })).rejects.toThrow(/UNAUTHENTICATED|401/);
    // The key may also come in the query, as `?key=`.
    const byQuery = await fetch(`${s.baseUrl}/v1beta/models/policy:generateContent?key=${s.apiKey}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(byQuery.status).toBe(200);
  });
});
