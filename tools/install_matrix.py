"""The install matrix: each install the docs tell a user to run, made from the built wheel in a clean venv, then
`--help` of every command and the commands the docs show for that install, on small data.

    python tools/install_matrix.py --wheel dist/lookbench-0.1.0-py3-none-any.whl --work .matrix [--torch]

Every venv is made by `uv` (its cache hard-links packages, so a venv takes seconds, the torch one too); the torch
install runs with `--torch`, pinned to the full torch tier's versions. `tests/test_install_matrix.py` keeps INSTALLS
in step with the docs.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELP_ALL = ("--help", "*")
"""`lookbench --help` as its own process, then every command's and subcommand's `--help` (HELP_IN_PROCESS)."""
HELP_IN_PROCESS = ("--help", "in-process")
"""The same helps rendered in one process (`lookbench.cli.reference`): what installs beyond the bare one check."""


@dataclass(frozen=True)
class Step:
    """`lookbench ARGV` (placeholders {work}; {data} and {train_data}, the tiny Synth releases the bare install
    generates; {root}, the repository); `refused`: exit 2 with one line holding
    this text; `absent`: a path (under {work}) the step must not create."""

    argv: tuple[str, ...]
    refused: str | None = None
    absent: str | None = None


@dataclass(frozen=True)
class Install:
    """A venv with `lookbench[extras]` from the wheel, and its steps."""

    name: str
    extras: tuple[str, ...]
    steps: tuple[Step, ...]
    torch: tuple[str, ...] = ()
    """The torch stack's pins (the full torch tier's); such an install runs only with --torch."""


def ok(line: str) -> Step:
    """`lookbench LINE` must exit 0."""
    return Step(tuple(shlex.split(line)))


def refused(extra: str, line: str, absent: str | None = None) -> Step:
    """`lookbench LINE` must stop in one line naming `pip install 'lookbench[extra]'`, writing nothing at `absent`."""
    return Step(tuple(shlex.split(line)), refused=f"pip install 'lookbench[{extra}]'", absent=absent)


TRAIN_TINY = (
    "--set data.train.snapshot={train_data} --set data.validation.snapshot={data} "
    "--set data.validation.allow_evaluation_snapshot=true --set data.guard.against=[{data}] --set data.workers=0 "
    "--set schedule.steps=2 --set schedule.warmup_steps=1 --set batch.size=8 --set checkpoint.every_steps=2"
)
INSTALLS: tuple[Install, ...] = (
    Install(
        "bare",
        (),
        (
            Step(HELP_ALL),
            ok("synth --out {work}/data --size tiny --release 2026-06-01"),
            ok("synth --out {work}/train-data --size tiny --release 2026-03-01 --purpose train"),
            ok("snapshot validate {data}"),
            ok("models"),
            ok("taxonomy"),
            ok("eval -s {data} -m features:thumbnail -o results/bare-thumbnail.json"),
            ok("tables results/bare-thumbnail.json --out bare-tables"),
            refused("default", "eval -s {data} -o results/bare.json", absent="results/bare.json"),
            refused("default", "audit {data} --output bare-audit.json", absent="bare-audit.json"),
            refused("release", "release {work}/release.yaml", absent="out"),
            refused("release", "contamination --snapshot {data} --against {work}/images"),
            refused("train", "train {root}/examples/train-synth-effnet.yaml --out bare-run", absent="bare-run"),
            refused("default", "eval -s {data} -m dinov2-vits14-imgfocus -o results/dino.json"),
            refused("hub", "eval -s hf://datasets/srpone/look-bench@main/v20251201 -m features:thumbnail"),
            refused("faiss", "eval -s {data} -m features:thumbnail --search faiss -o results/faiss.json"),
            refused("ray", "eval -s {data} -m features:thumbnail --executor ray -o results/ray.json"),
            refused("hf", "eval -s {data} -m hf:facebook/dinov2-small -o results/hf.json"),
            refused("openclip", "eval -s {data} -m open_clip:ViT-B-32/openai -o results/clip.json"),
            refused("timm", "eval -s {data} -m timm:resnet18 -o results/timm.json"),
            refused("mteb", "models --source mteb"),
            refused("api", "eval -s {data} -m api:http://127.0.0.1:9/embed -o results/api.json"),
        ),
    ),
    Install(
        "default",
        ("default", "hub", "faiss", "api", "onnx"),
        (
            Step(HELP_IN_PROCESS),
            ok("eval -s {data} -o results/default.json"),
            ok("eval -s {data} -m features:thumbnail -o results/thumbnail.json"),
            ok("eval -s {data} --search faiss -o results/faiss.json"),
            ok("tables results/default.json results/thumbnail.json --out tables"),
            ok("compare results/default.json results/thumbnail.json"),
            ok("leaderboard results/default.json results/thumbnail.json --out site"),
            ok("report results/default.json --out report"),
            ok("audit {data} --model efficientnet-lite0 --output audit.json"),
            ok("submit results/default.json --embed --out results-repo"),
            ok("verify glob:results-repo/*/*/v20260601 --snapshot {data}"),
            ok("card results/default.json --dataset srpone/look-bench"),
            ok("composed derive --out composed -s {data}"),
            refused("release", "release {work}/release.yaml", absent="out"),
        ),
    ),
    Install(
        "release",
        ("release",),
        (
            Step(HELP_IN_PROCESS),
            ok("release {work}/release.yaml"),
            ok("snapshot verify {work}/out/v20260701"),
            ok("contamination --snapshot {work}/out/v20260701 --against {work}/images"),
            # imagehash and numba are here, torch is not: refused once the config is read, the folder left unmade
            refused("train", "train {root}/examples/train-synth-effnet.yaml --out release-run", absent="release-run"),
        ),
    ),
    Install("ray", ("default", "ray"), (ok("eval -s {data} -m features:thumbnail --executor ray -o ray.json"),)),
    Install(
        "train",
        ("default", "train", "hf", "mteb", "gpu", "timm", "openclip", "torch"),
        (
            ok("models --source mteb"),
            ok(f"train {{root}}/examples/train-synth-effnet.yaml --out runs/demo --no-progress {TRAIN_TINY}"),
            ok("eval -s {data} -m trained:runs/demo -o results/trained.json"),
        ),
        torch=("torch==2.14.1", "torchvision==0.29.1"),
    ),
)


class MatrixFailure(Exception):
    """A step did not do what the matrix expects."""


def quiet(argv: list[str]) -> None:
    """Run an install step; its output only when it fails."""
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise MatrixFailure(f"{' '.join(argv)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")


def make_venv(install: Install, wheel: Path, venv: Path) -> None:
    """A clean venv holding the wheel with the install's extras (and the torch pins of a torch install)."""
    shutil.rmtree(venv, ignore_errors=True)
    target = f"{wheel}[{','.join(install.extras)}]" if install.extras else str(wheel)
    uv = [str(Path(sys.executable).with_name("uv"))]
    quiet([*uv, "venv", "-q", "--python", sys.executable, str(venv)])
    quiet([*uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), target, *install.torch])


def expand(token: str, places: dict[str, str], work: Path) -> str:
    """A step's token with its placeholders filled in; `glob:PATTERN` is the one path under WORK it matches."""
    text = token.format(**places)
    if text.startswith("glob:"):
        found = sorted(work.glob(text[len("glob:") :]))
        if len(found) != 1:
            raise MatrixFailure(f"{text}: {len(found)} matches under {work}")
        return str(found[0])
    return text


def run(venv: Path, argv: list[str], work: Path) -> subprocess.CompletedProcess[str]:
    """`lookbench ARGV` in the venv, offline, with its own cache."""
    env = {**os.environ, "LOOKBENCH_CACHE": str(work / "cache"), "HF_HUB_OFFLINE": "1", "COLUMNS": "120"}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [str(venv / "bin" / "lookbench"), *argv], cwd=work, env=env, capture_output=True, text=True, check=False
    )


def check_step(venv: Path, step: Step, places: dict[str, str], work: Path) -> str:
    """Run one step; a one-line summary, or MatrixFailure."""
    if step.argv == HELP_ALL:
        top = run(venv, ["--help"], work)
        if top.returncode != 0 or top.stderr or "Commands:" not in top.stdout:
            raise MatrixFailure(f"lookbench --help: exit {top.returncode}: {top.stderr}")
    if step.argv in (HELP_ALL, HELP_IN_PROCESS):
        code = "from lookbench.cli.reference import render; print(render().count('## lookbench'))"
        done = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise MatrixFailure(f"--help in the {venv.name} venv: {done.stderr}")
        return f"--help of {done.stdout.strip()} commands and groups, in one process"
    argv = [expand(token, places, work) for token in step.argv]
    done = run(venv, argv, work)
    shown = "lookbench " + " ".join(argv)
    if "Traceback" in done.stderr or "Traceback" in done.stdout:
        raise MatrixFailure(f"{shown}: a traceback\n{done.stderr}")
    if step.refused is None and done.returncode != 0:
        raise MatrixFailure(f"{shown}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
    if step.refused is not None:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        if done.returncode != 2 or len(lines) != 1 or step.refused not in lines[0]:
            raise MatrixFailure(f"{shown}: expected exit 2 and one line with {step.refused!r}: {done.stderr!r}")
    if step.absent is not None and (work / step.absent).exists():
        raise MatrixFailure(f"{shown}: wrote {step.absent} although it was refused")
    return f"{shown}: exit {done.returncode}"


def prepare(work: Path, data: Path) -> None:
    """The matrix's inputs: a release config over the tiny Synth release, and a folder of three images."""
    from PIL import Image

    work.mkdir(parents=True, exist_ok=True)
    (work / "results").mkdir(exist_ok=True)
    (work / "images").mkdir(exist_ok=True)
    for n, colour in enumerate(("red", "green", "blue")):
        Image.new("RGB", (64, 64), colour).save(work / "images" / f"{n}.png")
    (work / "release.yaml").write_text(
        f"release_date: 2026-07-01\noutput: out\nsources:\n  - {{kind: synth, name: synth, path: {data}}}\n",
        encoding="utf-8",
    )


def run_install(install: Install, wheel: Path, root: Path) -> list[str]:
    """Make the install's venv and run its steps in a fresh work folder; the lines to print."""
    work = root / install.name
    shutil.rmtree(work, ignore_errors=True)
    places = {"work": str(work), "root": str(ROOT)}
    places["data"] = str(root / INSTALLS[0].name / "data" / "v20260601")
    places["train_data"] = str(root / INSTALLS[0].name / "train-data")
    prepare(work, Path(places["data"]))
    started = time.monotonic()
    make_venv(install, wheel, root / f"venv-{install.name}")
    lines = [f"[{install.name}] lookbench[{','.join(install.extras)}] installed in {time.monotonic() - started:.1f} s"]
    for step in install.steps:
        started = time.monotonic()
        summary = check_step(root / f"venv-{install.name}", step, places, work)
        lines.append(f"[{install.name}] {summary} ({time.monotonic() - started:.1f} s)")
    return lines


def main() -> int:
    """Run the chosen installs; exit 1 at the first failure."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheel", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--torch", action="store_true", help="run the torch installs too (several GB of packages)")
    parser.add_argument("--install", action="append", help="run only these installs (repeatable)")
    args = parser.parse_args()
    # the first install (bare) generates the data every other one reads
    data = args.work.resolve() / INSTALLS[0].name / "data"
    wanted = set(args.install or [i.name for i in INSTALLS]) | (set() if data.exists() else {INSTALLS[0].name})
    chosen = [i for i in INSTALLS if i.name in wanted]
    chosen = [i for i in chosen if args.torch or not i.torch]
    passed = 0
    for install in chosen:
        try:
            for line in run_install(install, args.wheel.resolve(), args.work.resolve()):
                print(line, flush=True)
        except MatrixFailure as exc:
            print(f"[{install.name}] FAILED: {exc}", flush=True)
            print(f"install matrix: {install.name} failed after {passed} installs ran as documented")
            return 1
        passed += 1
    print(f"install matrix: all {passed} installs ran as documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
