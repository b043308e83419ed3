"""Read a PyTorch checkpoint (legacy or zip format) into numpy arrays without importing torch."""

from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from lookbench.errors import EmbeddingError

_DTYPES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}


class _StorageType:
    """Stands in for `torch.FloatStorage` and friends while unpickling."""

    def __init__(self, name: str) -> None:
        self.dtype = np.dtype(_DTYPES[name])


def _rebuild_tensor(storage: np.ndarray, offset: int, size: tuple[int, ...], stride: tuple[int, ...], *_: Any) -> Any:
    itemsize = storage.dtype.itemsize
    view = np.lib.stride_tricks.as_strided(
        storage[offset:], shape=tuple(size), strides=tuple(s * itemsize for s in stride)
    )
    return np.array(view)


def _defer(*args: Any) -> tuple[str, tuple[Any, ...]]:
    return ("tensor", args)


class _Unpickler(pickle.Unpickler):
    """Maps the few torch globals a state dict references onto numpy stand-ins."""

    def __init__(self, fh: Any, load_storage: Any) -> None:
        super().__init__(fh)
        self._load_storage = load_storage

    def find_class(self, module: str, name: str) -> Any:
        if module == "collections" and name == "OrderedDict":
            return OrderedDict
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return _defer
        if module == "torch" and name in _DTYPES:
            return _StorageType(name)
        raise pickle.UnpicklingError(f"unsupported global {module}.{name} in a checkpoint")

    def persistent_load(self, pid: Any) -> Any:
        return self._load_storage(pid)


def _load_legacy(fh: io.BufferedReader) -> dict[str, np.ndarray]:
    for _ in range(3):  # magic number, protocol version, sys info
        pickle.load(fh)  # noqa: S301 - trusted local checkpoint, no torch globals resolved
    pending: dict[str, tuple[np.dtype, int]] = {}

    def storage(pid: tuple[Any, ...]) -> Any:
        _, storage_type, key, _location, numel = pid[:5]
        pending[key] = (storage_type.dtype, numel)
        return key

    obj = _Unpickler(fh, storage).load()
    keys = pickle.load(fh)  # noqa: S301
    arrays: dict[str, np.ndarray] = {}
    for key in keys:
        dtype, _ = pending[key]
        count = int(np.frombuffer(fh.read(8), dtype="<i8")[0])
        arrays[key] = np.frombuffer(fh.read(count * dtype.itemsize), dtype=dtype)
    return {name: _rebuild_tensor(arrays[args[0]], *args[1:]) for name, (_, args) in obj.items()}


def _load_zip(path: Path) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        prefix = names[0].split("/")[0]

        def storage(pid: tuple[Any, ...]) -> Any:
            _, storage_type, key, _location, _numel = pid[:5]
            data = zf.read(f"{prefix}/data/{key}")
            return np.frombuffer(data, dtype=storage_type.dtype)

        obj = _Unpickler(io.BytesIO(zf.read(f"{prefix}/data.pkl")), storage).load()
    return {name: _rebuild_tensor(*args) for name, (_, args) in obj.items()}


def load_state_dict(path: Path | str) -> dict[str, np.ndarray]:
    """Return a checkpoint's `name -> array` mapping; only plain tensors in a (nested-free) dict are supported."""
    path = Path(path)
    try:
        if zipfile.is_zipfile(path):
            return _load_zip(path)
        with path.open("rb") as fh:
            return _load_legacy(fh)  # type: ignore[arg-type]
    except (pickle.UnpicklingError, KeyError, ValueError, EOFError) as exc:
        raise EmbeddingError(f"{path}: cannot read the checkpoint without torch ({exc})") from exc
