'use strict';
// The client of the template benchmarks' round trips, in a process of its own (load.js
// `loadApart`). It is sent the endpoints and the load, calls each endpoint as one of load.js's
// growing conversations, and sends back each kind's latencies phase by phase. Only the client
// runs here, so the servers' process does no client work.
const { conversation, openLoop, grow, agent } = require('./load.js');

process.once('message', async ({ endpoints, rate, turns, phases }) => {
  const calls = endpoints.map(({ kind, id, baseUrl, apiKey }) => ({ kind, call: conversation(() => ({ baseUrl, apiKey }), id) }));
  await grow(calls.map((c) => c.call), turns);
  await new Promise((go) => { process.once('message', go); process.send({ grown: true }); });
  for (let i = 0; i < phases.length; i++) {
    const { kinds, seconds } = phases[i];
    const latencies = {};
    const these = calls.filter((c) => kinds.includes(c.kind));
    for (const { kind } of these) latencies[kind] ??= [];
    await openLoop(these.map(({ kind, call }) => async () => { const t = await call(); latencies[kind].push(t); return t; }), rate, seconds);
    process.send({ phase: i, latencies });
  }
  agent.destroy();
  process.send({ done: true }, () => process.exit(0));
});
