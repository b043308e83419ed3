"""Submission bundles: a result with its per-query file, card, environment and (optionally) embeddings, in a
results-repository folder `<model>/<revision>/<release>` whose manifest holds the sha256 of every file."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench._util.atomic import atomic_folder, write_text_atomic
from lookbench._util.hashing import file_sha256
from lookbench._util.jsontext import loads
from lookbench.embeddings.checks import load_npy
from lookbench.errors import EmbeddingError, SubmissionError, first_problem
from lookbench.evaluation.noise import NoisePool, noise_tag
from lookbench.models.meta import ModelMeta
from lookbench.results.io import load_with_per_query, per_query_path
from lookbench.results.naming import slug
from lookbench.results.schema import TYPED_MODEL_SINCE, ResultFile, schema_tuple
from lookbench.snapshot.schema import NOISE

BUNDLE_FORMAT: Final = "lookbench-submission/1"
MANIFEST = "manifest.json"
CARD = "card.json"
ENVIRONMENT = "environment.json"
EMBEDDINGS = "embeddings"
RESERVED = (MANIFEST, CARD, ENVIRONMENT, EMBEDDINGS)
"""Names a bundle writes itself: a result or per-query file of one of these names would be overwritten."""
NO_REVISION = "no_revision_available"
"""The revision folder of a model that declares none (MTEB's results repository uses the same name)."""


class BundleManifest(BaseModel):
    """What a bundle holds and the sha256 of every file in it (this manifest excepted)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    format: Literal["lookbench-submission/1"]
    model: str
    revision: str
    release: str
    snapshot_hash: str
    result: str
    per_query: str
    card: str
    environment: str
    embeddings: str | None
    files: dict[str, str]


@dataclass(frozen=True)
class Bundle:
    """An opened bundle whose files all match its manifest."""

    root: Path
    manifest: BundleManifest
    result: ResultFile

    @property
    def result_path(self) -> Path:
        """The bundled result JSON."""
        return self.root / self.manifest.result

    @property
    def embeddings(self) -> Path | None:
        """The bundled embeddings folder, if the bundle has one."""
        return None if self.manifest.embeddings is None else self.root / self.manifest.embeddings


def embedding_splits(result: ResultFile) -> list[tuple[str, str, int | None]]:
    """(subset, split, rows or None when the result cannot tell) of each embeddings file a re-scoring reads."""
    out: list[tuple[str, str, int | None]] = []
    windowed = result.config.window is not None
    for subset, info in result.snapshot.subsets.items():
        out.append((subset, "query", None if windowed else info.queries + info.skipped_queries))
        out.append((subset, "gallery", info.gallery))
    if result.snapshot.noise_rows:
        out.append((NOISE, "gallery", result.snapshot.noise_rows))
    return out


def check_embedding_files(folder: Path, result: ResultFile, result_path: Path) -> list[Path]:
    """The embeddings files a re-scoring needs, each checked to be a 2-D array of the result's row count and one
    shared dimension; raises naming the file and the result field it disagrees with."""
    files: list[Path] = []
    declared = result.model.meta.embed_dim if isinstance(result.model.meta.embed_dim, int) else None
    dim = declared
    for subset, split, rows in embedding_splits(result):
        path = folder / subset / f"{split}.npy"
        if not path.is_file():
            raise SubmissionError(f"{path}: missing; the result {result_path} scored {subset}/{split}")
        try:
            array = load_npy(path, mmap_mode="r")
        except EmbeddingError as exc:
            raise SubmissionError(str(exc)) from exc
        count = "gallery" if split == "gallery" else "queries"
        field = "noise_rows" if subset == NOISE else f"subsets.{subset}.{count}"
        if array.ndim != 2 or (rows is not None and array.shape[0] != rows):
            raise SubmissionError(
                f"{path}: shape {tuple(array.shape)}, but {result_path} (field snapshot.{field}) says "
                f"{rows if rows is not None else 'some'} rows of one vector each"
            )
        if dim is not None and array.shape[1] != dim:
            where = "field model.meta.embed_dim" if declared is not None else "the dimension of the files before"
            raise SubmissionError(f"{path}: shape {tuple(array.shape)}, but {result_path} ({where}) says {dim}")
        dim = int(array.shape[1])
        files.append(path)
    return files


def bundle_folder(result: ResultFile) -> Path:
    """`<model>/<revision>/<release>`: the release is the snapshot, plus the fine rule, window and noise pool when
    not the defaults, so every distinct run of one model revision has its own folder."""
    revision = result.model.meta.revision or NO_REVISION
    release = result.snapshot.id
    if result.config.fine_rule != "main":
        release += f"__{result.config.fine_rule}"
    window = result.config.window
    if window is not None:
        release += "".join(f"__{word}-{day}" for word, day in (("since", window.since), ("until", window.until)) if day)
    release += noise_tag(NoisePool(result.config.noise))
    return Path(slug(result.model_name)) / slug(revision) / slug(release)


def card_of(result: ResultFile) -> dict[str, Any]:
    """The bundle's card: the model's name, spec, revision and its card facts as the result recorded them."""
    return {
        "name": result.model_name,
        "spec": result.model.spec,
        "revision": result.model.meta.revision,
        "card": result.model.meta.fact_sheet() or {},
    }


def environment_of(result: ResultFile) -> dict[str, Any]:
    """The bundle's environment record: packages and platform of the run, and the lookbench that produced it."""
    return {"lookbench_version": result.lookbench_version, "created_at": result.created_at, **result.environment}


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True) + "\n"


def write_bundle(result_path: Path, embeddings: Path | None, repository: Path) -> Path:
    """Copy a result pair (and its embeddings) into `repository` as a new bundle; return the bundle folder.

    An existing bundle folder is never replaced: a resubmission of the same run needs its old bundle removed first.
    """
    result, _ = load_with_per_query(result_path)
    per_query = per_query_path(result_path, result)
    for path in (result_path, per_query):
        if path.name in RESERVED:
            raise SubmissionError(f"{path}: a bundle writes its own {path.name}; rename the result pair first")
    if embeddings is not None and not embeddings.is_dir():
        raise SubmissionError(f"--embeddings {embeddings}: not a folder")
    arrays = check_embedding_files(embeddings, result, result_path) if embeddings is not None else []
    target = repository / bundle_folder(result)
    check_no_links(repository, target)
    if target.exists():
        raise SubmissionError(f"{target}: a bundle of this run is already there; remove it to submit again")
    with atomic_folder(target) as tmp:
        shutil.copyfile(result_path, tmp / result_path.name)
        shutil.copyfile(per_query, tmp / per_query.name)
        write_text_atomic(tmp / CARD, _json(card_of(result)))
        write_text_atomic(tmp / ENVIRONMENT, _json(environment_of(result)))
        for path in arrays:
            relative = path.relative_to(embeddings) if embeddings is not None else path
            (tmp / EMBEDDINGS / relative.parent).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, tmp / EMBEDDINGS / relative)
        manifest = BundleManifest(
            format=BUNDLE_FORMAT,
            model=result.model_name,
            revision=result.model.meta.revision or NO_REVISION,
            release=result.snapshot.id,
            snapshot_hash=result.snapshot.content_hash,
            result=result_path.name,
            per_query=per_query.name,
            card=CARD,
            environment=ENVIRONMENT,
            embeddings=EMBEDDINGS if arrays else None,
            files={name: file_sha256(tmp / name) for name in _bundle_files(tmp)},
        )
        write_text_atomic(tmp / MANIFEST, manifest.model_dump_json(indent=2) + "\n")
    return target


def check_no_links(repository: Path, target: Path) -> None:
    """Refuse a bundle folder reached through a symbolic link below the repository (it would be written, or read,
    outside the repository)."""
    here = repository
    for part in target.relative_to(repository).parts:
        here = here / part
        if here.is_symlink():
            raise SubmissionError(f"{here}: a symbolic link; a bundle folder must lie inside {repository}")


def _bundle_files(root: Path) -> list[str]:
    """Every file under a bundle folder as a POSIX relative path, the manifest excepted, sorted; a symbolic link
    or anything but plain files and folders is refused (it could point outside the bundle)."""
    found = []
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            if path.is_symlink():
                raise SubmissionError(f"{path}: a symbolic link; a bundle holds plain files only")
            if name in files and not path.is_file():
                raise SubmissionError(f"{path}: not a plain file; a bundle holds plain files only")
        found += [(Path(folder) / name).relative_to(root).as_posix() for name in files]
    return sorted(name for name in found if name != MANIFEST)


def expected_files(manifest: BundleManifest, result: ResultFile) -> set[str]:
    """The files a bundle of `result` holds: its result pair, card, environment and the embeddings it scored."""
    names = {manifest.result, manifest.per_query, manifest.card, manifest.environment}
    if manifest.embeddings is not None:
        names |= {f"{EMBEDDINGS}/{subset}/{split}.npy" for subset, split, _ in embedding_splits(result)}
    return names


def _plain_name(name: str) -> bool:
    """A file name without folders, `.` or `..`."""
    return name not in ("", ".", "..") and "/" not in name and "\\" not in name and Path(name).name == name


def read_manifest(root: Path) -> BundleManifest:
    """A bundle's manifest, validated; names the file and field at fault."""
    path = root / MANIFEST
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SubmissionError(f"{path}: missing; {root} is not a submission bundle") from exc
    except (OSError, ValueError) as exc:
        raise SubmissionError(f"{path}: not valid JSON ({exc})") from exc
    try:
        return BundleManifest.model_validate(data)
    except ValidationError as exc:
        raise SubmissionError(f"{path}: field {first_problem(exc, '(top level)')}") from exc


def open_bundle(root: Path) -> Bundle:
    """Open a bundle, checking that its files are exactly the manifest's, byte for byte, and agree with each other."""
    present = set(_bundle_files(root))  # before any file is read: a linked manifest is refused unread
    manifest = read_manifest(root)
    for field in ("result", "per_query", "card", "environment"):
        if not _plain_name(getattr(manifest, field)):
            raise SubmissionError(f"{root / MANIFEST}: field {field} must name a file in the bundle folder itself")
    if manifest.embeddings not in (None, EMBEDDINGS):
        raise SubmissionError(f"{root / MANIFEST}: field embeddings must be {EMBEDDINGS!r} or null")
    for name in manifest.files:
        parts = name.split("/")
        if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
            raise SubmissionError(f"{root / MANIFEST}: field files names {name!r}, a path outside the bundle")
    for name in sorted(set(manifest.files) - present):
        raise SubmissionError(f"{root / name}: listed in {MANIFEST} (field files) but missing from the bundle")
    for name in sorted(present - set(manifest.files)):
        raise SubmissionError(f"{root / name}: in the bundle but not listed in {MANIFEST} (field files)")
    for name, digest in sorted(manifest.files.items()):
        if file_sha256(root / name) != digest:
            raise SubmissionError(f"{root / name}: sha256 differs from {MANIFEST} (field files.{name}): edited")
    for field in ("result", "per_query", "card", "environment"):
        if getattr(manifest, field) not in manifest.files:
            raise SubmissionError(f"{root / MANIFEST}: field {field} names a file the bundle does not hold")
    result_path = root / manifest.result
    result, _ = load_with_per_query(result_path)
    if per_query_path(result_path, result).name != manifest.per_query:
        raise SubmissionError(f"{root / MANIFEST}: field per_query is not {result_path}'s per_query_file")
    expected = {
        "model": result.model_name,
        "revision": result.model.meta.revision or NO_REVISION,
        "release": result.snapshot.id,
        "snapshot_hash": result.snapshot.content_hash,
    }
    for field, value in expected.items():
        if getattr(manifest, field) != value:
            raise SubmissionError(f"{root / MANIFEST}: field {field} is not {result_path}'s ({value!r})")
    location = result.snapshot.location
    if "://" not in location and Path(location).resolve().is_relative_to(root.resolve()):
        raise SubmissionError(f"{result_path}: field snapshot.location points inside the bundle ({location})")
    wanted = expected_files(manifest, result)
    for name in sorted(set(manifest.files) - wanted):
        raise SubmissionError(f"{root / name}: not a file a bundle of {result_path} holds (field files of {MANIFEST})")
    for name in sorted(wanted - set(manifest.files)):
        raise SubmissionError(f"{root / name}: missing; {result_path} scored it (field files of {MANIFEST})")
    for name, record in ((manifest.card, card_of(result)), (manifest.environment, environment_of(result))):
        try:
            stored = loads((root / name).read_text(encoding="utf-8"))
        except ValueError as exc:  # UnicodeDecodeError is one too
            raise SubmissionError(f"{root / name}: not valid JSON ({exc})") from exc
        old_card = name == manifest.card and schema_tuple(result.schema_version) < TYPED_MODEL_SINCE
        if not _same_record(stored, json.loads(_json(record)), old_card):
            raise SubmissionError(f"{root / name}: does not match {result_path} (fields model / environment)")
    return Bundle(root, manifest, result)


def _same_record(stored: Any, expected: dict[str, Any], old_card: bool) -> bool:
    """Whether a bundle's card or environment file says what its result does. The card of a schema 1.0-1.2 result
    is compared as a fact sheet: its bundle holds the card dict as it was, which the result now reads leniently
    (see `ModelMeta.lenient`); a 1.3 bundle's files must match exactly."""
    if not old_card or not isinstance(stored, dict) or stored == expected:
        return bool(stored == expected)
    facts, wanted = stored.get("card"), expected.get("card")
    rest = {k: v for k, v in stored.items() if k != "card"}
    return rest == {k: v for k, v in expected.items() if k != "card"} and ModelMeta.lenient(
        facts or None
    ) == ModelMeta.lenient(wanted or None)


def find_bundles(repository: Path) -> list[Path]:
    """Every bundle folder (one holding a manifest) under a results repository, sorted."""
    if not repository.is_dir():
        raise SubmissionError(f"results repository not found: {repository}")
    found = []
    for folder, dirs, files in os.walk(repository):  # never into a linked folder: it may lie outside
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if MANIFEST in files:
            found.append(Path(folder))
    return sorted(found)
