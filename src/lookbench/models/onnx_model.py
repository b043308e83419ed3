"""`onnx:<file>?size=..&resize=..&mean=..&std=..&output=..&pool=..`: any ONNX image encoder via onnxruntime."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import numpy as np

from lookbench._util.hashing import file_sha256
from lookbench.errors import EmbeddingError, LookBenchError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import EncoderBase, InputKind
from lookbench.models.options import floats3, split_options
from lookbench.models.preprocess import IMAGENET_MEAN, IMAGENET_STD, Preprocess
from lookbench.models.spec import ModelSpec

OPTIONS = {"size", "resize", "mean", "std", "output", "pool", "interpolation", "mode", "input", "id"}
Pool = Literal["cls", "mean"]


def import_onnxruntime() -> Any:
    """onnxruntime, or an error naming the extra to install."""
    try:
        import onnxruntime
    except ImportError as exc:
        raise EmbeddingError("onnx models need onnxruntime: pip install 'lookbench[onnx]'") from exc
    return onnxruntime


class OnnxEncoder(EncoderBase):
    """Runs an ONNX graph on preprocessed NCHW float32 batches; token outputs are pooled, maps averaged."""

    input_kind: InputKind = "tensor"

    def __init__(
        self,
        path: Path,
        preprocess: Preprocess,
        output: str | None = None,
        pool: Pool = "cls",
        model_id: str | None = None,
        input_name: str | None = None,
        revision: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        ort = import_onnxruntime()
        if not path.is_file():
            raise EmbeddingError(f"ONNX model file not found: {path}")
        self.path = path
        self.preprocess: Preprocess | None = preprocess
        self.pool = pool
        self.model_id = model_id or f"onnx:{path.name}"
        self._weights_revision = revision or file_sha256(path)[:16]
        self.extra = extra or {}
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle intra-op threads must not spin: the decoding threads need those cycles.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        threads = os.environ.get("LOOKBENCH_ORT_THREADS")
        if threads:
            options.intra_op_num_threads = int(threads)
        try:
            self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise EmbeddingError(f"{path}: onnxruntime cannot load it ({exc})") from exc
        inputs = [i.name for i in self.session.get_inputs()]
        outputs = [o.name for o in self.session.get_outputs()]
        self.input_name = input_name or inputs[0]
        self.output_name = output or outputs[0]
        if self.input_name not in inputs:
            raise EmbeddingError(f"{path}: no input {self.input_name!r}; inputs: {', '.join(inputs)}")
        if self.output_name not in outputs:
            raise EmbeddingError(f"{path}: no output {self.output_name!r}; outputs: {', '.join(outputs)}")
        self.revision = f"{self._weights_revision}+{self.output_name}+{pool}"

    def encode(self, batch: np.ndarray) -> np.ndarray:
        """Run the graph and reduce its output to (batch, dim)."""
        (out,) = self.session.run([self.output_name], {self.input_name: batch})
        if out.ndim == 3:
            return out[:, 0] if self.pool == "cls" else out.mean(axis=1)
        if out.ndim == 4:
            return out.mean(axis=(2, 3))
        return out.reshape(out.shape[0], -1)

    def describe(self) -> dict[str, Any]:
        """File, output and pooling used."""
        return {"kind": "onnx", "file": str(self.path), "output": self.output_name, "pool": self.pool, **self.extra}


def load(spec: ModelSpec, options: EmbedOptions) -> OnnxEncoder:
    """Build an OnnxEncoder from `file?options` (defaults: 224 crop from 256, ImageNet mean/std, first output)."""
    argument = spec.argument
    path_text, opts = split_options(argument, OPTIONS)
    try:
        size = int(opts.get("size", 224))
        resize = int(opts["resize"]) if "resize" in opts else round(size / 0.875)
        preprocess = Preprocess(
            crop=size,
            resize=resize,
            resize_mode=opts.get("mode", "shortest"),  # type: ignore[arg-type]
            interpolation=opts.get("interpolation", "bicubic"),  # type: ignore[arg-type]
            mean=floats3(opts["mean"], "mean") if "mean" in opts else IMAGENET_MEAN,
            std=floats3(opts["std"], "std") if "std" in opts else IMAGENET_STD,
        )
    except ValueError as exc:
        raise LookBenchError(f"bad onnx options in {argument!r}: {exc}") from exc
    pool = opts.get("pool", "cls")
    if pool not in ("cls", "mean"):
        raise LookBenchError(f"pool={pool!r}: expected cls or mean")
    return OnnxEncoder(
        Path(path_text).expanduser(),
        preprocess,
        output=opts.get("output"),
        pool=pool,  # type: ignore[arg-type]
        model_id=opts.get("id"),
        input_name=opts.get("input"),
    )
