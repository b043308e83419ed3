"""Every measurement of benchmarks/: what it measures, the command that writes its result files, its typical time."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Measurement:
    """Result files, what they hold, the command writing them (None: no script here), its time on 2 cores, a note."""

    results: tuple[str, ...]
    measures: str
    command: str | None
    time: str
    note: str = ""


SNAPSHOT_DEFAULT = "SNAPSHOT: `lookbench synth --default` prints the default's folder"
SNAPSHOT_REAL = "SNAPSHOT: the folder `lookbench synth --size real` makes"

MEASUREMENTS: tuple[Measurement, ...] = (
    Measurement(
        ("default_eval.json",),
        "the README's first run: the default model's scores on the default snapshot",
        "python benchmarks/measure.py default_eval --figures "
        "results/efficientnet-lite0__v20260601-synth-6-small-seed0__main.json lookbench eval",
        "minutes (first run generates and embeds)",
    ),
    Measurement(
        ("scale-scoring.json",),
        "search + every metric + 1,000-resample intervals at the released size (2,345 queries, ~60k rows, 1024-d)",
        "python benchmarks/scale.py scoring [--search exact|torch|faiss:hnsw] [--eval]",
        "< 1 min",
    ),
    Measurement(
        ("scale-eval.json",),
        "a cache-hit `lookbench eval` with a model at real scale: wall time, peak memory",
        "python benchmarks/scale.py eval [--model efficientnet-lite0]",
        "10+ min",
    ),
    Measurement(
        ("scale-audit.json",),
        "`lookbench audit` at the real preset's row counts, per phase",
        "python benchmarks/scale.py audit --out results/audit-scale",
        "~1 min",
    ),
    Measurement(
        ("embedding_throughput.json",),
        "inference only vs end to end, decode throughput, CPU per image",
        "python benchmarks/embedding_throughput.py --model efficientnet-lite0 --images 64 --batch-size 32",
        "~1 min",
    ),
    Measurement(
        ("shard_scaling.json",),
        "embedding with 1, 2, 4 worker processes and on Ray",
        "python benchmarks/shard_scaling.py --synth small --workers 1,2,4 [--ray]",
        "10+ min",
    ),
    Measurement(
        ("agreement-precision.json",),
        "fp32 against bf16/fp16: vectors, rankings, metrics (needs torch)",
        "python benchmarks/agreement.py precision --precisions bf16,fp16",
        "10+ min on CPU",
    ),
    Measurement(
        ("agreement-decode.json",),
        "device decoding against the CPU reference (needs torch)",
        "python benchmarks/agreement.py decode [--pixels-only]",
        "minutes",
    ),
    Measurement(
        ("gpu_targets.json",),
        "the GPU targets in one run: ViT-L/16 throughput, torch search, decoding",
        "python benchmarks/gpu_targets.py --out gpu_targets.json",
        "3-6 min on one GPU",
    ),
    Measurement(
        ("dedup-errors.json",),
        "duplicate detection's missed copies, false matches and false merges per setting",
        "python benchmarks/dedup/errors.py --fashion-mnist DIR --synth small",
        "10+ min",
    ),
    Measurement(
        ("dedup-errors-rules.json",),
        "the same under the every-pair crop-candidate rule and the rule with a quarter within one bit, in one run; "
        "the crop-candidate rule is fixed in the library, so no script on this tree compares rules",
        None,
        "~35 min",
    ),
    Measurement(
        ("dedup-scale.json",),
        "per-look-up time and memory of the dedup tables against the faiss floor",
        "python benchmarks/dedup/scale.py --sizes 10000 --queries 200 --repeats 1",
        "< 1 min at 10k; hours at 1M",
        "add 100000 1000000 to `--sizes` for scale",
    ),
    Measurement(
        ("dedup-cluster.json",),
        "the sharded dedup stage end to end on Synth images: wall per batch size, local processes and Ray workers, "
        "fitted and projected",
        "python benchmarks/dedup/cluster.py SNAPSHOT --growth 10000 30000 100000 300000 --sizes 250 500 1000 2000 "
        "--processes 1 2 --ray-workers 1 2 4 --ray-size 500",
        "~5 min",
    ),
    Measurement(
        ("dedup-release.json",),
        "a 10,000-image batch against the 69k-image real-size Synth on 2 processes (min and median of repeats), "
        "projected to 69k against 69k and to a 1M-image crawl; the crop-candidate search on real window codes",
        "python benchmarks/dedup/release.py SNAPSHOT --batch 10000 --processes 2",
        "~30 min",
        SNAPSHOT_REAL,
    ),
    Measurement(
        ("dedup-release-69k.json",),
        "the same with a batch of the history's size, 69k against 69k, one run (the script writes "
        "`dedup-release.json`; kept under this name)",
        "python benchmarks/dedup/release.py SNAPSHOT --batch 69399 --processes 2 --repeats 1",
        "~40 min",
        SNAPSHOT_REAL,
    ),
    Measurement(
        ("dedup-lookup.json",),
        "where a look-up's time goes on real images (hashing, candidates, alignment, fetches)",
        "python benchmarks/dedup/lookup.py SNAPSHOT --queries 40",
        "~3 min",
        SNAPSHOT_DEFAULT,
    ),
    Measurement(
        ("labelling_accuracy.json",),
        "the builder's annotator: true and judged accuracy on a Synth release",
        "python benchmarks/labelling_accuracy.py --size mini",
        "~1 min",
    ),
    Measurement(
        ("synth-generation.json", "synth-generation-medium.json"),
        "wall, CPU and peak memory of `lookbench synth`, alternated with the renderer before (`--baseline SRC`)",
        "python benchmarks/synth.py generation --size small|medium --workers 2 --baseline SRC",
        "minutes",
    ),
    Measurement(
        ("synth-validity.json", "synth-agreement.json", "synth-agreement-seeds0-3-4.json"),
        "pretrained vs random-initialised default model on a Synth release; `agreement`: Kendall's tau-b of the "
        "ranking Synth and Fashion-MNIST's real photos give 9 systems (networks and weight-free features), with its "
        "95% interval over query resamples (`--seeds 0,3,4`: Synth's side pooled over three draws)",
        "python benchmarks/synth.py validity|agreement --size small",
        "10+ min",
        "agreement reads Debian's dataset-fashion-mnist (or --fashion-mnist DIR)",
    ),
    Measurement(
        ("synth-baselines.json", "synth-baselines-seed3.json", "synth-baselines-seed4.json", "synth-pooled.json"),
        "what layout or colour alone scores, with and without the noise pool; with `--audit`, the audit's "
        "calibrated test and fashion-blind baselines (colour, layout, size, box-registered shape) against the default "
        "model, each ratio with its 95% interval; `synth.py pooled --seeds 0,3,4`: those ratios with the three draws' "
        "hits pooled",
        "python benchmarks/synth.py baselines --size small --audit [--seed 3|4]",
        "5+ min",
    ),
    Measurement(
        ("synth-baselines-real.json",),
        "the same at the released counts (a size other than `small` writes `synth-baselines-SIZE.json`, a seed "
        "other than 0 `...-seedN.json`)",
        "python benchmarks/synth.py baselines --size real --audit",
        "~1.5 h",
    ),
    Measurement(
        ("tie_rule.json",),
        "how often image size alone ranks a distractor first: lower-row ties, the tie rule, random ties",
        "python benchmarks/tie_rule.py SNAPSHOT",
        "< 1 min",
        SNAPSHOT_DEFAULT,
    ),
    Measurement(
        ("composed_by_kind.json",),
        "a composed run's metric per kind of query, with paired differences",
        "python benchmarks/composed_by_kind.py SNAPSHOT A.json [B.json]",
        "seconds",
    ),
    Measurement(
        ("train_throughput.json",),
        "training step throughput, end to end vs model only (needs torch, a GPU for the target)",
        "python benchmarks/train_throughput.py",
        "minutes",
    ),
    Measurement(
        ("training_ablations.json",),
        "the recipe's ablations scored on the validation release",
        "python benchmarks/training_ablations.py --data data --out runs/ablations",
        "hours on CPU",
    ),
    Measurement(
        ("training_eval-sweep.json",),
        "choose the pretrained-mix share on validation",
        "python benchmarks/training_eval.py sweep --trained runs/demo --fmnist DIR --out runs/sweep",
        "30+ min",
    ),
    Measurement(
        ("training_eval-score.json",),
        "score a chosen mix once from cached vectors",
        "python benchmarks/training_eval.py score --trained runs/demo --share 0.8 --out runs/final --snapshot default",
        "minutes",
    ),
    Measurement(
        ("training_eval-overlap.json",),
        "ablations' paired tests with and without the queries the training release reaches",
        "python benchmarks/training_eval.py overlap --overlap OUT/overlap_queries.json --results DIR --out table.md",
        "seconds",
    ),
    Measurement(
        (
            "training_evidence-noise-all.json",
            "training_evidence-noise-none.json",
            "training_evidence-fashion-mnist.json",
        ),
        "the training how-to end to end: trained vs frozen, in and out of domain",
        "bash benchmarks/training_evidence.sh OUT",
        "~1 h",
    ),
    Measurement(
        ("training_scaling.json",),
        "the example scaling study: Fine R@1 against the share of training items, frozen reference",
        "python benchmarks/measure.py training_scaling --figures scaling/scaling.json "
        "lookbench scaling examples/scaling-synth-effnet.yaml --out scaling",
        "~40 min",
        "run in OUT of `training_evidence.sh`, its `data` with `examples` linked",
    ),
)
