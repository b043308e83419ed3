"""`gr:<hub repo, .pt file or folder>?trust_remote_code=1[&feature_dim=1024][&revision=..]`: GR-style search models.

GR-Lite (srpone/gr-lite) embeds RGB images with `model.search(image_paths=[PIL images], feature_dim=N)`, which does
its own preprocessing and returns `(scores, embeddings)`. The model comes either as a whole pickled torch module
(`gr_lite.pt`, what a hub repo id downloads) or as a transformers remote-code folder (config.json with `auto_map`).
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lookbench._util.hashing import file_sha256
from lookbench._util.jsontext import loads
from lookbench._util.optional import pick_device, require
from lookbench.errors import EmbeddingError, LookBenchError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.hub import ensure_hub_model, hub_cache_dir, hub_offline
from lookbench.models.options import folder_fingerprint, split_options
from lookbench.models.spec import ModelSpec
from lookbench.models.torch_base import TorchEncoder

OPTIONS = {"feature_dim", "trust_remote_code", "revision"}
HUB_FILE = "gr_lite.pt"
DEFAULT_DIM = 1024
PICKLE, REMOTE_CODE = "pickle", "remote code"
_WHY = {
    PICKLE: "is loaded by unpickling a whole torch module (torch.load with weights_only=False), which runs any code "
    "the file contains",
    REMOTE_CODE: "is transformers remote code: loading it runs the Python files in the folder",
}
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@runtime_checkable
class SearchModel(Protocol):
    """What a `gr:` model must have: GR-Lite's `.search(image_paths, feature_dim)` -> (scores, embeddings)."""

    def search(self, image_paths: list[Any], feature_dim: int) -> Any:
        """Embed images (RGB PIL images here) at `feature_dim`."""
        ...


@runtime_checkable
class CropSwitch(Protocol):
    """GR-Lite's config: `is_crop` crops each image to its detected garment before embedding."""

    is_crop: bool


@runtime_checkable
class ConfiguredModel(Protocol):
    """A loaded module that carries its config (a transformers model pickled whole)."""

    config: Any


def _feature_dim(opts: dict[str, str], spec: str) -> int:
    """The `feature_dim` option as a positive integer."""
    value = opts.get("feature_dim", str(DEFAULT_DIM))
    if not value.isdigit() or int(value) == 0:
        raise LookBenchError(f"{spec}: option feature_dim={value!r}: expected a positive integer")
    return int(value)


def _has_auto_map(folder: Path) -> bool:
    """Whether `folder/config.json` names remote-code classes (`auto_map`)."""
    config = folder / "config.json"
    if not config.is_file():
        return False
    try:
        return "auto_map" in loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"{config}: not a readable JSON config ({exc})") from exc


def _locate(name: str, spec: str) -> tuple[str, Path | None]:
    """How to load `name` and its local path (None: a hub repo whose `gr_lite.pt` is downloaded)."""
    local = Path(name).expanduser()
    if local.is_file():
        return PICKLE, local
    if local.is_dir():
        if _has_auto_map(local):
            return REMOTE_CODE, local
        if (local / HUB_FILE).is_file():
            return PICKLE, local / HUB_FILE
        raise EmbeddingError(
            f"{spec}: {local} has neither a config.json with auto_map (transformers remote code) nor {HUB_FILE}"
        )
    if name.startswith(("/", ".", "~")) or name.endswith((".pt", ".pth")):
        raise EmbeddingError(f"{spec}: {name} does not exist")
    return PICKLE, None


def _download(repo: str, revision: str | None, spec: str) -> tuple[Path, str]:
    """Fetch the repo's `gr_lite.pt` (or take it from the cache) and return it with the resolved commit."""
    ensure_hub_model(repo, spec)
    hub = require("huggingface_hub", "hf")
    try:
        # cache and offline mode as hub.py sees them now (huggingface_hub reads its environment once, at import)
        kwargs = {"revision": revision, "cache_dir": hub_cache_dir(), "local_files_only": hub_offline()}
        path = Path(hub.hf_hub_download(repo, HUB_FILE, **kwargs))
    except (OSError, hub.errors.EntryNotFoundError) as exc:
        raise EmbeddingError(f"{spec}: cannot fetch {HUB_FILE} from {repo} ({type(exc).__name__}: {exc})") from exc
    commit = path.parent.name  # the hub cache keeps files under snapshots/<commit>/
    return path, commit if _COMMIT.match(commit) else (revision or file_sha256(path)[:16])


def _describe_object(obj: Any) -> str:
    """What a `.pt` file held, for the error when it is not a search model."""
    if isinstance(obj, Mapping):
        keys = ", ".join(str(k) for k in list(obj)[:3])
        return f"a mapping of {len(obj)} entries (a state dict? first keys: {keys})"
    return f"a {type(obj).__module__}.{type(obj).__name__}"


def _unpickle(torch: Any, path: Path, device: str, spec: str) -> Any:
    """torch.load a whole pickled module, explaining the usual failures."""
    try:
        return torch.load(path, map_location=device, weights_only=False)
    except (ModuleNotFoundError, AttributeError) as exc:
        raise EmbeddingError(
            f"{spec}: cannot unpickle {path} ({exc}); a whole-module pickle needs the code that defined its "
            "classes to be importable (on PYTHONPATH)"
        ) from exc
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError) as exc:
        raise EmbeddingError(f"{spec}: {path} is not a readable torch file ({exc})") from exc


def _crop_off(config: Any) -> bool:
    """Turn GR-Lite's `is_crop` off, as the authors' LookBench evaluation does; False when there is no such switch."""
    if not isinstance(config, CropSwitch):
        return False
    config.is_crop = False
    return True


def load(spec: ModelSpec, options: EmbedOptions) -> TorchEncoder:
    """Load a model with `.search(image_paths, feature_dim)`; arbitrary code runs only with trust_remote_code=1."""
    argument = spec.argument
    name, opts = split_options(argument, OPTIONS)
    where = str(spec)
    dim = _feature_dim(opts, where)
    route, path = _locate(name, where)
    if opts.get("trust_remote_code", "0").lower() not in ("1", "true"):
        raise EmbeddingError(
            f"{where}: {path or f'{name} ({HUB_FILE})'} {_WHY[route]}; add trust_remote_code=1 to the where "
            "if you trust its source"
        )
    if path is not None and "revision" in opts:
        raise LookBenchError(f"{where}: revision= selects a hub commit, but {path} is local")
    if path is None:
        path, revision = _download(name, opts.get("revision"), where)
    else:
        revision = folder_fingerprint(path) if path.is_dir() else file_sha256(path)[:16]
    torch = require("torch", "torch")
    device = pick_device(torch)
    if route == REMOTE_CODE:
        transformers = require("transformers", "hf")
        config = transformers.AutoConfig.from_pretrained(str(path), trust_remote_code=True)
        crop_off = _crop_off(config)
        model = transformers.AutoModel.from_pretrained(str(path), config=config, trust_remote_code=True)
    else:
        model = _unpickle(torch, path, device, where)
        crop_off = isinstance(model, ConfiguredModel) and _crop_off(model.config)
    if not isinstance(model, SearchModel):
        raise EmbeddingError(
            f"{where}: {path} holds {_describe_object(model)}, not a model with .search(image_paths, feature_dim)"
        )
    if hasattr(model, "to"):
        model = model.to(device)
    if hasattr(model, "eval"):
        model.eval()

    def forward(images: list[Any]) -> Any:
        result = model.search(image_paths=images, feature_dim=dim)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise EmbeddingError(f"{where}: search() returned {type(result).__name__}, expected (scores, embeddings)")
        vectors = torch.as_tensor(result[1])
        if tuple(vectors.shape) != (len(images), dim):
            raise EmbeddingError(
                f"{where}: search(feature_dim={dim}) returned embeddings of shape {tuple(vectors.shape)} for "
                f"{len(images)} images, expected ({len(images)}, {dim})"
            )
        return vectors

    extra = {"kind": "gr", "loaded_as": route, "source": str(path), "feature_dim": dim, "is_crop_turned_off": crop_off}
    return TorchEncoder(forward, None, where, revision, device, extra, options.precision)
