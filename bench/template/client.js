'use strict';
// The client of bench:template's round trips in a process of its own (load.js `loadApart`): it
// is sent the endpoints and the load, calls them as load.js's growing conversations, and sends
// back each kind's latencies. Only the client is here: the servers' process does no client work.
const { conversation, openLoop, grow, agent } = require('./load.js');

process.once('message', async ({ endpoints, rate, seconds, turns }) => {
  const latencies = {};
  const calls = endpoints.map(({ kind, id, baseUrl, apiKey }) => {
    latencies[kind] ??= [];
    return { kind, call: conversation(() => ({ baseUrl, apiKey }), id) };
  });
  await grow(calls.map((c) => c.call), turns);
  await new Promise((go) => { process.once('message', go); process.send({ grown: true }); });
  await openLoop(calls.map(({ kind, call }) => async () => { const t = await call(); latencies[kind].push(t); return t; }), rate, seconds);
  agent.destroy();
  process.send({ latencies }, () => process.exit(0));
});
