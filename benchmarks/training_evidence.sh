#!/bin/bash
# The training how-to (docs/training.md) end to end, each step timed with the machine load, resumable (a finished
# step is skipped): a design-disjoint training release, the example recipe, its validation sweep of the pretrained
# mix (Synth validation release and Fashion-MNIST's validation protocol only), then the trained model (loaded with
# the recipe's mix) and the frozen model on the default snapshot with and without the noise pool and on the
# Fashion-MNIST test protocol, and the paired comparisons.
#   benchmarks/training_evidence.sh OUT        (needs the train extra and Debian's dataset-fashion-mnist)
set -euo pipefail
OUT=${1:?usage: benchmarks/training_evidence.sh OUT}
LB=${LOOKBENCH:-lookbench}
PY=${PYTHON:-python}
mkdir -p "$OUT/results"
step() {
  local name=$1; shift
  echo "== $name start $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "== $name: %e s wall, %U s user, %S s sys" "$@"
  echo "== $name end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
}
R=$OUT/results
[ -d "$OUT/data/v20260301" ] || step data $LB synth --out "$OUT/data" --release 2026-03-01 --size small --purpose train
[ -f "$OUT/demo/model.json" ] || step train $LB train examples/train-synth-effnet.yaml --out "$OUT/demo" --no-progress \
  --set "data.train.snapshot=$OUT/data" --set runtime.threads=1 --set data.workers=1
[ -d "$OUT/ood/fashion-mnist" ] || step ood $LB legacy import fashion-mnist /usr/share/datasets/fashion-mnist --out "$OUT/ood"
[ -d "$OUT/ood/fashion-mnist-validation" ] || step ood-validation $LB legacy import fashion-mnist-validation \
  /usr/share/datasets/fashion-mnist --out "$OUT/ood"
[ -f "$OUT/sweep/sweep.md" ] || step sweep $PY benchmarks/training_eval.py sweep --trained "$OUT/demo" \
  --fmnist "$OUT/ood/fashion-mnist-validation" --out "$OUT/sweep"
for noise in all none; do
  [ -f "$R/trained-$noise.json" ] || step "trained-$noise" $LB eval -m "trained:$OUT/demo" --noise $noise -o "$R/trained-$noise.json"
  [ -f "$R/frozen-$noise.json" ] || step "frozen-$noise" $LB eval --noise $noise -o "$R/frozen-$noise.json"
done
for model in trained frozen; do
  spec=$([ $model = trained ] && echo "trained:$OUT/demo" || echo efficientnet-lite0)
  [ -f "$R/fmnist-$model.json" ] || step "fmnist-$model" $LB eval -s "$OUT/ood/fashion-mnist" -m "$spec" -o "$R/fmnist-$model.json"
done
# the comparisons' figures, with the machine and its load, in benchmarks/results/training_evidence-*.json
MEASURE="$PY $(dirname "$0")/measure.py"
$MEASURE training_evidence-noise-all $LB compare "$R/trained-all.json" "$R/frozen-all.json" --metrics fine_recall@1,coarse_recall@1,ndcg@5,distractor_share@1
$MEASURE training_evidence-noise-none $LB compare "$R/trained-none.json" "$R/frozen-none.json" --metrics fine_recall@1,coarse_recall@1,ndcg@5
$MEASURE training_evidence-fashion-mnist $LB compare "$R/fmnist-trained.json" "$R/fmnist-frozen.json" --metrics fine_recall@1,ndcg@5
