#!/usr/bin/env bash
# One prepared GPU check for a machine with an NVIDIA GPU; finishes in under five minutes.
#
#   bash bench/gpu_check.sh          # JSON under $OUT if set, else bench/results/
#
# 1. installs the project with its test and GPU extras if CuPy is missing;
# 2. bench/gpu_correctness.py: every kernel against float64 NumPy (max relative
#    error <= 1e-5 float32, <= 1e-3 float16, rows sum to 1, special values, any
#    axis, fused attention against compute.attention);
# 3. bench/gpu_softmax.py: the bandwidth benchmark (median of 20 runs, L2
#    flushed) beside copy, cupyx, a three-pass kernel and torch.
# Exits non-zero when a correctness check fails (the benchmark still runs).
set -uo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3}"
DEST="${OUT:-bench/results}"
mkdir -p "$DEST"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
START=$SECONDS

echo "== GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || echo "(nvidia-smi unavailable)"

if ! "$PY" -c "import cupy, scipy, hypothesis" >/dev/null 2>&1; then
    echo "== installing the project with the test and GPU extras"
    "$PY" -m pip install --quiet -e '.[test,gpu]' || { echo "pip install failed" >&2; exit 2; }
fi
"$PY" -c "import cupy; print('cupy', cupy.__version__, 'CUDA runtime', cupy.cuda.runtime.runtimeGetVersion(), 'devices', cupy.cuda.runtime.getDeviceCount())" \
    || { echo "CuPy cannot reach a CUDA device" >&2; exit 2; }

echo "== NVRTC compile test (no device needed)"
"$PY" -m pytest -q -p no:cacheprovider tests/compute/test_cuda_compile.py -k "not spills" 2>&1 | tail -3

echo "== correctness ($(( SECONDS - START )) s so far)"
timeout 150 "$PY" bench/gpu_correctness.py --out "$DEST/gpu_correctness_$STAMP.json" > /dev/null
CORRECT=$?
echo "correctness exit status: $CORRECT (0: all pass; details in $DEST/gpu_correctness_$STAMP.json)"

echo "== benchmark ($(( SECONDS - START )) s so far)"
LEFT=$(( 285 - (SECONDS - START) ))
if (( LEFT < 60 )); then
    echo "not enough time left for the full benchmark; float32 only"
    EXTRA=(--dtypes float32)
else
    EXTRA=()
fi
timeout "$(( LEFT > 30 ? LEFT : 30 ))" "$PY" bench/gpu_softmax.py --repeat 20 --warmup 2 "${EXTRA[@]}" \
    --out "$DEST/gpu_softmax_$STAMP.json" > /dev/null
BENCH=$?
echo "benchmark exit status: $BENCH (results in $DEST/gpu_softmax_$STAMP.json)"
echo "== done in $(( SECONDS - START )) s"
if (( CORRECT != 0 )); then exit 1; fi
exit "$BENCH"
