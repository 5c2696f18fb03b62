'use strict';
// The client of the template benchmarks' round trips, in a process of its own (load.js
// `loadApart`). It is sent the endpoints and the load, calls each endpoint as one of load.js's
// growing conversations, and sends back each kind's latencies phase by phase. Only the client
// runs here, so the servers' process does no client work.
const { callsOf, loopByKind, grow, agent } = require('./load.js');

process.once('message', async ({ endpoints, rate, turns, phases }) => {
  const calls = callsOf(endpoints);
  await grow(calls.map((c) => c.call), turns);
  await new Promise((go) => { process.once('message', go); process.send({ grown: true }); });
  for (let i = 0; i < phases.length; i++) {
    const { kinds, seconds } = phases[i];
    process.send({ phase: i, latencies: await loopByKind(calls.filter((c) => kinds.includes(c.kind)), rate, seconds) });
  }
  agent.destroy();
  process.send({ done: true }, () => process.exit(0));
});
