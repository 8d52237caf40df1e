#!/usr/bin/env bash
# Brings the real Qwen3.5-0.8B to mlpscope: downloads the checkpoint from its hub (needs internet)
# and converts it to a weight set.
#
#   weights/qwen3.5-0.8b.sh [--dtype q8|q4|f16|f32] [--embed-dtype D] [--out DIR]
#   weights/qwen3.5-0.8b.sh --from HF_FOLDER [...]     convert an already downloaded folder
#
# Defaults: --dtype q8, --out weights/qwen3.5-0.8b. The download goes to weights/hf/Qwen3.5-0.8B
# (about 1.8 GB); converting streams tensor by tensor (memory stays small).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="Qwen/Qwen3.5-0.8B"
base="${MLPSCOPE_HUB:-https://huggingface.co}"
dtype=q8 embed="" out=weights/qwen3.5-0.8b from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dtype) dtype=$2; shift 2 ;;
    --embed-dtype) embed=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

if [ -z "$from" ]; then
  from="weights/hf/Qwen3.5-0.8B"
  mkdir -p "$from"
  get() { # get FILE [optional]
    local url="$base/$repo/resolve/main/$1"
    if curl -fL --retry 5 -C - -o "$from/$1.part" "$url"; then mv "$from/$1.part" "$from/$1"
    elif [ "${2:-}" = optional ]; then rm -f "$from/$1.part"; return 0
    else echo "cannot download $url" >&2; exit 1; fi
  }
  for f in config.json tokenizer.json tokenizer_config.json; do get "$f"; done
  get generation_config.json optional
  get chat_template.jinja optional
  if get model.safetensors.index.json optional && [ -f "$from/model.safetensors.index.json" ]; then
    for f in $(node -e 'const m=require(process.argv[1]).weight_map;console.log([...new Set(Object.values(m))].join(" "))' "$PWD/$from/model.safetensors.index.json"); do get "$f"; done
  else
    get model.safetensors
  fi
fi

[ -f build/wasm/mlpscope.wasm ] || ./build.sh wasm
args=(convert "$from" --out "$out" --dtype "$dtype")
[ -n "$embed" ] && args+=(--embed-dtype "$embed")
node bin/mlpscope.js "${args[@]}"
echo "converted: node bin/mlpscope.js info $out"
