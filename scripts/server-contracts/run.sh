#!/usr/bin/env bash
# Regenerate the servers' contracts (JSON Schema + route table) from their sources at a commit.
#
#   scripts/server-contracts/run.sh                      # every source whose mirror is here, at its pinned commit
#   scripts/server-contracts/run.sh skyrl-main --git DIR --commit SHA   # one source, another mirror or commit
#
# A mirror is any git directory holding the commit (a clone's .git, or `fetch`'s /work/.mirror/<owner>+<name>/repo).
# Writing over the committed files and running `git diff` shows what changed between the two commits.
# Needs python3 (standard library only) and git.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mirrors="${CLAWGYM_MIRRORS:-/work/.mirror}"

# name | owner/repo | pinned commit | output | extractor arguments (files in lookup order, models to define)
SKYRL_API="--file skyrl/tinker/api.py --file skyrl/tinker/types.py --define ForwardBackwardOutput --define OptimStepOutput --define SaveWeightsForSamplerOutput --define SaveWeightsOutput --define LoadWeightsOutput --define SampleOutput --define CreateModelOutput --define UnloadModelOutput"
sources() {
  echo "skyrl-main|NovaSky-AI/SkyRL|a9564572eb8e91076be43c1bd5e4615e3de17265|plugins/engine-tinker/contracts/skyrl-main.json|$SKYRL_API"
  echo "skyrl-v0.3.0|NovaSky-AI/SkyRL|f5bc3b78dfddfb352870d5d7430cd226e5785838|plugins/engine-tinker/contracts/skyrl-v0.3.0.json|$SKYRL_API"
  echo "tinker-sdk|thinking-machines-lab/tinker|d595dc2ba62a1494aa0f452fe1d0dbb7b321b870|plugins/engine-tinker/contracts/tinker-sdk.json|@tinker-sdk"
  echo "sglang|sgl-project/sglang|0025436eab0556737d615b36a4dd3e1e26e82f3d|plugins/engine-vllm/contracts/sglang.json|--file python/sglang/srt/entrypoints/http_server.py --file python/sglang/srt/managers/io_struct.py --file python/sglang/srt/sampling/sampling_params.py --init-class SamplingParams --define SamplingParams"
  echo "vllm|vllm-project/vllm|047c993c|plugins/engine-vllm/contracts/vllm.json|--file vllm/entrypoints/openai/api_server.py --file vllm/entrypoints/openai/protocol.py"
}

# The Tinker SDK's models are one file each; its routes are the calls its resources make.
sdk_args() {
  local git="$1" commit="$2"
  git --git-dir "$git" ls-tree -r --name-only "$commit" src/tinker/types | grep '\.py$' | grep -v '__init__' | sed 's/^/--file /' | tr '\n' ' '
  git --git-dir "$git" ls-tree -r --name-only "$commit" src/tinker/resources | grep '\.py$' | grep -v '__init__' | sed 's/^/--client-file /' | tr '\n' ' '
  echo "--file src/tinker/_models.py"
}

only="${1:-}"; [[ "$only" == --* ]] && only="" || shift || true
git_dir=""; commit=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --git) git_dir="$2"; shift 2 ;;
    --commit) commit="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

sources | while IFS='|' read -r name repo pinned out args; do
  [[ -n "$only" && "$only" != "$name" ]] && continue
  dir="${git_dir:-$mirrors/${repo/\//+}/repo}"
  at="${commit:-$pinned}"
  if ! git --git-dir "$dir" cat-file -e "$at^{commit}" 2>/dev/null; then
    echo "$name: skipped, no mirror holding $at at $dir (give --git DIR)" >&2
    continue
  fi
  at="$(git --git-dir "$dir" rev-parse "$at^{commit}")"
  [[ "$args" == "@tinker-sdk" ]] && args="$(sdk_args "$dir" "$at")"
  mkdir -p "$root/$(dirname "$out")"
  # shellcheck disable=SC2086
  (cd "$here" && python3 extract.py --repo "$repo" --commit "$at" --git "$dir" $args --out "$root/$out")
done
