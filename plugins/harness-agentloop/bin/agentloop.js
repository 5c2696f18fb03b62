#!/usr/bin/env node
'use strict';
// agentloop: a small agent loop, run as its own process inside the sandbox. It speaks OpenAI Chat
// Completions to the model endpoint and offers four tools confined to the workspace:
// read_file, write_file, list_files, bash. Plain Node, no dependencies, so it runs anywhere Node does.
//
//   OPENAI_BASE_URL=... OPENAI_API_KEY=... agentloop [--max-turns N] [--model M] "<instruction>"
//
// With CLAWGYM_MODEL_SOCKET set, requests go over that Unix socket (OPENAI_BASE_URL's path is kept):
// inside a sandbox this spares the TCP forwarder process.
//
// With CLAWGYM_TOOL_LATENCY_MS="MIN-MAX", every tool call first waits a random MIN..MAX ms, as real
// tools wait on networks and builds (bench:async measures what overlapping that wait is worth).
//
// Exit codes: 0 the model finished (answered without a tool call), 2 the turn limit was reached,
// 1 the model endpoint failed.
const { spawnSync } = require('node:child_process');
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const TOOLS = [
  { name: 'read_file', description: 'Read a text file of the workspace.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'write_file', description: 'Write (create or replace) a text file of the workspace.', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] } },
  { name: 'list_files', description: 'List the files of a workspace folder.', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'bash', description: 'Run a shell command in the workspace.', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
];

function parseArgs(argv) {
  const out = { maxTurns: 16, model: process.env.OPENAI_MODEL || 'clawgym-policy', instruction: '' };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--max-turns') out.maxTurns = Number(argv[++i]);
    else if (argv[i] === '--model') out.model = argv[++i];
    else out.instruction = argv[i];
  }
  return out;
}

const root = fs.realpathSync(process.cwd());
/** A workspace path, or an error if it leaves the workspace. */
function inside(p) {
  const full = path.resolve(root, String(p || '.'));
  const rel = path.relative(root, full);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`path outside the workspace: ${p}`);
  return full;
}

function runTool(name, args) {
  try {
    switch (name) {
      case 'read_file': return fs.readFileSync(inside(args.path), 'utf8');
      case 'write_file': {
        const file = inside(args.path);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, String(args.content ?? ''));
        return `wrote ${Buffer.byteLength(String(args.content ?? ''))} bytes to ${args.path}`;
      }
      case 'list_files': return fs.readdirSync(inside(args.path)).sort().join('\n') || '(empty)';
      case 'bash': {
        const r = spawnSync('/bin/sh', ['-c', String(args.command ?? '')], { cwd: root, encoding: 'utf8', timeout: 30_000, maxBuffer: 1 << 20 });
        return `${r.stdout ?? ''}${r.stderr ?? ''}`.slice(-8000) + (r.status ? `\n(exit ${r.status})` : '');
      }
      default: return `error: unknown tool ${name}`;
    }
  } catch (err) {
    return `error: ${err.message}`;
  }
}

/** POST JSON; plain node:http for http URLs and sockets (cheaper to load than fetch), fetch otherwise. */
function post(url, headers, payload) {
  const socketPath = process.env.CLAWGYM_MODEL_SOCKET;
  if (!socketPath && !url.startsWith('http:')) {
    return fetch(url, { method: 'POST', headers, body: payload }).then(async (res) => ({ status: res.status, text: await res.text() }));
  }
  const u = new URL(url);
  const target = socketPath ? { socketPath } : { host: u.hostname, port: u.port || 80 };
  return new Promise((resolve, reject) => {
    const req = http.request({ ...target, path: u.pathname + u.search, method: 'POST', headers: { ...headers, host: u.host, 'content-length': Buffer.byteLength(payload) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function chat(body) {
  const base = (process.env.OPENAI_BASE_URL || '').replace(/\/$/, '');
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${process.env.OPENAI_API_KEY || ''}` };
  const { status, text } = await post(`${base}/chat/completions`, headers, JSON.stringify(body));
  if (status < 200 || status >= 300) throw new Error(`model endpoint answered ${status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** The configured wait before a tool answers (none unless CLAWGYM_TOOL_LATENCY_MS is set). */
function toolLatency() {
  const m = /^(\d+)-(\d+)$/.exec(process.env.CLAWGYM_TOOL_LATENCY_MS || '');
  if (!m) return Promise.resolve();
  const lo = Number(m[1]);
  const hi = Math.max(lo, Number(m[2]));
  return new Promise((done) => setTimeout(done, lo + Math.random() * (hi - lo)));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!args.instruction) { process.stderr.write('usage: agentloop [--max-turns N] [--model M] "<instruction>"\n'); return 1; }
  const messages = [
    { role: 'system', content: 'You are an agent working in a folder. Use the tools to do the task, then reply briefly without a tool call.' },
    { role: 'user', content: args.instruction },
  ];
  const tools = TOOLS.map((t) => ({ type: 'function', function: t }));
  for (let turn = 0; turn < args.maxTurns; turn++) {
    let reply;
    try {
      reply = (await chat({ model: args.model, messages, tools })).choices[0].message;
    } catch (err) {
      process.stderr.write(`agentloop: ${err.message}\n`);
      return 1;
    }
    messages.push({ role: 'assistant', content: reply.content ?? null, ...(reply.tool_calls ? { tool_calls: reply.tool_calls } : {}) });
    if (!reply.tool_calls || reply.tool_calls.length === 0) {
      process.stdout.write(`${JSON.stringify({ turns: turn + 1, final: reply.content ?? '' })}\n`);
      return 0;
    }
    for (const call of reply.tool_calls) {
      await toolLatency();
      let parsed = {};
      try { parsed = JSON.parse(call.function.arguments || '{}'); } catch { /* the tool reports the bad arguments */ }
      messages.push({ role: 'tool', tool_call_id: call.id, content: runTool(call.function.name, parsed) });
    }
  }
  process.stdout.write(`${JSON.stringify({ turns: args.maxTurns, final: null, reason: 'turn limit' })}\n`);
  return 2;
}

main().then((code) => { process.exitCode = code; });
