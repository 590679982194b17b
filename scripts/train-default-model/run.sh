#!/bin/bash
# Reproduces the default model: corpus -> training -> ONNX -> int4 -> model
# directory -> validation loss.
#   scripts/train-default-model/run.sh OUT_DIR [SECONDS]
# SECONDS: the training budget (default 4200: the 70 minutes the shipped
# weights trained for). CFG (default 256,256,6,8,4,688,256,32) and SEED are
# passed to train.py. Needs Debian's python3-torch, python3-onnx, fortunes,
# fortunes-min (apt-get install ...) and the package built (npm run build).
# Training uses OpenBLAS when it can (apt-get download libopenblas0-pthread
# into OUT_DIR; about 4-7x faster than the reference BLAS torch gets by
# default; not installed system-wide).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:?usage: run.sh OUT_DIR [SECONDS]}
BUDGET=${2:-4200}
export CFG=${CFG:-256,256,6,8,4,688,256,32}
PY=/usr/bin/python3
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

"$PY" -c 'import torch, onnx' 2>/dev/null || { echo "run.sh: needs python3-torch and python3-onnx (apt-get install python3-torch python3-onnx)" >&2; exit 1; }
[ -f "$ROOT/dist/cli.js" ] || { echo "run.sh: build the package first (npm run build)" >&2; exit 1; }

BLAS="$OUT/openblas/usr/lib/x86_64-linux-gnu/openblas-pthread"
if [ ! -d "$BLAS" ]; then
  (cd "$OUT" && apt-get download libopenblas0-pthread >/dev/null 2>&1 && dpkg -x libopenblas0-pthread_*.deb openblas) ||
    echo "run.sh: no OpenBLAS (apt-get download failed); training with the reference BLAS" >&2
fi
[ -d "$BLAS" ] && export LD_LIBRARY_PATH="$BLAS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2}

cd "$HERE"
"$PY" corpus.py "$OUT/corpus.txt"
"$PY" train.py "$OUT/corpus.txt" "$OUT/checkpoint.pt" "$BUDGET"
"$PY" export.py "$OUT/checkpoint.pt" "$OUT/model.onnx"
node model-dir.mjs "$OUT/model"
cp "$OUT/model.onnx" "$OUT/model/onnx/model.onnx"
# the same as: npx onnx-light quantize ... (the package's CLI)
node "$ROOT/dist/cli.js" quantize --model "$OUT/model.onnx" --out "$OUT/model/onnx/model_q4.onnx" \
  --format ort_matmulnbits_int4 --block-size 32 --accuracy-level 4
node evaluate.mjs --corpus "$OUT/corpus.txt" "$OUT/model/onnx/model.onnx" "$OUT/model/onnx/model_q4.onnx"
node "$ROOT/dist/cli.js" generate --model-dir "$OUT/model" --prompt "The " --max-new-tokens 128
