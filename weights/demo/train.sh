#!/usr/bin/env bash
# Reproduces the committed demo model (weights/demo/): generates the bilingual corpus, builds the
# trainer, learns the vocabulary from the corpus's first 4 MB, trains on both cores (2,000 steps
# with input noise on 70% of the sequences: about 8 minutes on a 2-core AVX2 machine) and writes
# the q8 weight set, the training log and the summary here. The same seed gives the same loss
# curve: the trainer's arithmetic is bit-reproducible (earlier models were rerun in full, also on
# an AVX-512 and an AVX2 machine, and wrote the same log and weight file; this one was trained once,
# and the tests rerun its first 20 steps).
#   weights/demo/train.sh [--steps N] [--resume]     (default 2000 steps)
# --resume: after an interruption, go on from the last checkpoint (every 200 steps) to the same
# weights, bit for bit.
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=2000
resume=
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --resume) resume=--resume; shift ;;
    *) echo "usage: weights/demo/train.sh [--steps N] [--resume]" >&2; exit 2 ;;
  esac
done
work=build/demo-train
mkdir -p "$work"
node tools/corpus.mjs --seed 1 --docs 300000 --out "$work/train.txt"
node tools/corpus.mjs --seed 2 --docs 8000 --out "$work/val.txt"
./build.sh trainer
if [ -z "$resume" ]; then rm -f "$work/ckpt.bin"; fi
build/native/mlpscope-train --train "$work/train.txt" --val "$work/val.txt" \
  --out weights/demo --out-f32 "$work/f32" --log weights/demo/training-log.tsv --ckpt "$work/ckpt.bin" \
  --steps "$steps" --batch 16 --ctx 128 --vocab 2048 --bpe-bytes 4000000 --hidden 128 --layers 11 --heads 4 --inter 448 \
  --lr 3e-3 --warmup 100 --input-noise 0.8 --noise-share 0.7 --seed 2 --threads 2 --eval-every 100 --ckpt-every 200 $resume \
  | tee weights/demo/summary.json
