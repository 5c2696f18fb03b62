#!/usr/bin/env bash
# Regenerate the servers' contracts (JSON Schema + route table) from their sources at a commit.
#
#   scripts/server-contracts/run.sh                      # every source whose mirror is here, at its pinned commit
#   scripts/server-contracts/run.sh skyrl-main --git DIR --commit SHA   # one source, another mirror or commit
#   scripts/server-contracts/run.sh sglang-0025436e --tree DIR           # one source from a folder of its files
#
# A mirror is any git directory holding the commit (a clone's .git, or `fetch`'s /work/.mirror/<owner>+<name>/repo).
# Writing over the committed files and running `git diff` shows what changed between the two commits.
# Needs python3 (standard library only) and git.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mirrors="${CLAWGYM_MIRRORS:-/work/.mirror}"

# name | owner/repo | pinned commit | mirror folder under $mirrors | output | extractor arguments (files in lookup order, models to define)
# SGLang and vLLM: the commits the engine client was first read against (sglang 0025436e, vllm
# 047c993c) are in no snapshot that could be brought here (upstream's are over the size limit;
# modal-projects' forks hold upstream main up to 2026-07-20 and 2026-08-03), so their main at
# those dates is what was read. Give --git/--commit to read another. Of the pinned commits only
# single files are stored (read one by one into a folder, given with --tree): SGLang's
# http_server.py at 0025436e (its routes; io_struct.py, which holds their body models, is not
# stored at 0025436e nor 00c17caf, so the bodies are named and marked unresolved) and
# sampling_params.py at 00c17caf. vLLM's 047c993c is known by those 8 digits only, and no file
# of it could be had.
SKYRL_API="--file skyrl/tinker/api.py --file skyrl/tinker/types.py --define ForwardBackwardOutput --define OptimStepOutput --define SaveWeightsForSamplerOutput --define SaveWeightsOutput --define LoadWeightsOutput --define SampleOutput --define CreateModelOutput --define UnloadModelOutput"
SGLANG="--file python/sglang/srt/entrypoints/http_server.py --file python/sglang/srt/managers/io_struct.py --file python/sglang/srt/sampling/sampling_params.py --init-class SamplingParams --define SamplingParams"
VLLM="--file vllm/entrypoints/openai/completion/api_router.py --file vllm/entrypoints/serve/lora/api_router.py --file vllm/entrypoints/openai/models/api_router.py --file vllm/entrypoints/serve/instrumentator/health.py --file vllm/entrypoints/serve/dev/rlhf/api_router.py --file vllm/entrypoints/openai/completion/protocol.py --file vllm/entrypoints/serve/lora/protocol.py --file vllm/entrypoints/openai/engine/protocol.py --file vllm/sampling_params.py"
sources() {
  echo "skyrl-main|NovaSky-AI/SkyRL|a9564572eb8e91076be43c1bd5e4615e3de17265|NovaSky-AI+SkyRL|plugins/engine-tinker/contracts/skyrl-main.json|$SKYRL_API"
  echo "skyrl-v0.3.0|NovaSky-AI/SkyRL|f5bc3b78dfddfb352870d5d7430cd226e5785838|NovaSky-AI+SkyRL|plugins/engine-tinker/contracts/skyrl-v0.3.0.json|$SKYRL_API"
  echo "tinker-sdk|thinking-machines-lab/tinker|d595dc2ba62a1494aa0f452fe1d0dbb7b321b870|thinking-machines-lab+tinker|plugins/engine-tinker/contracts/tinker-sdk.json|@tinker-sdk"
  echo "sglang|sgl-project/sglang|8905cbd42f4a27dbecad6487cd3904278756fef8|modal-projects+sglang|plugins/engine-vllm/contracts/sglang.json|$SGLANG"
  echo "vllm|vllm-project/vllm|c8109375733e6b788e73c7cc1ed2004234834392|modal-projects+vllm|plugins/engine-vllm/contracts/vllm.json|$VLLM"
  echo "sglang-0025436e|sgl-project/sglang|0025436eab0556737d615b36a4dd3e1e26e82f3d|-|plugins/engine-vllm/contracts/sglang-0025436e.json|--file python/sglang/srt/entrypoints/http_server.py"
  echo "sglang-00c17caf|sgl-project/sglang|00c17cafcb9e289d5ca97c50e44ada54e4fd5b03|-|plugins/engine-vllm/contracts/sglang-00c17caf.json|--file python/sglang/srt/sampling/sampling_params.py --init-class SamplingParams --define SamplingParams"
}

# The Tinker SDK's models are one file each; its routes are the calls its resources make.
sdk_args() {
  local git="$1" commit="$2"
  git --git-dir "$git" ls-tree -r --name-only "$commit" src/tinker/types | grep '\.py$' | grep -v '__init__' | sed 's/^/--file /' | tr '\n' ' '
  git --git-dir "$git" ls-tree -r --name-only "$commit" src/tinker/resources | grep '\.py$' | grep -v '__init__' | sed 's/^/--client-file /' | tr '\n' ' '
  echo "--file src/tinker/_models.py"
}

only="${1:-}"; [[ "$only" == --* ]] && only="" || shift || true
git_dir=""; commit=""; tree=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --git) git_dir="$2"; shift 2 ;;
    --tree) tree="$2"; shift 2 ;;
    --commit) commit="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

sources | while IFS='|' read -r name repo pinned mirror out args; do
  [[ -n "$only" && "$only" != "$name" ]] && continue
  if [[ -n "$tree" ]]; then
    # shellcheck disable=SC2086
    (cd "$here" && python3 extract.py --repo "$repo" --commit "${commit:-$pinned}" --tree "$tree" $args --out "$root/$out")
    continue
  fi
  if [[ "$mirror" == "-" && -z "$git_dir" ]]; then
    echo "$name: skipped, no mirror holds $pinned (give --tree DIR with its files, or --git DIR)" >&2
    continue
  fi
  dir="${git_dir:-$mirrors/$mirror/repo}"
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
