"""Reading a dataset distribution as published: locating its files, list files line by line, JSON records, images.

Every problem is a `DatasetImportError` naming the file (and line) at fault; every file read is recorded with its
sha256 for the dataset card.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lookbench._util.hashing import file_sha256
from lookbench._util.jsontext import loads
from lookbench.errors import DatasetImportError
from lookbench.snapshot.card import SourceFile

MAX_LINE_BYTES = 1 << 20
"""A list-file line longer than this is refused (a list of image names never has one)."""
MAX_JSON_BYTES = 1 << 30
"""A JSON file larger than this is refused before parsing (the largest official one is far smaller)."""
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".gif")


@dataclass(frozen=True)
class Line:
    """One line of a list file: where it is and its whitespace-separated fields."""

    path: Path
    number: int
    fields: list[str]

    @property
    def where(self) -> str:
        """`file:line`, for error messages and the `source_record` column."""
        return f"{self.path}:{self.number}"


@dataclass
class Distribution:
    """The root folder of a downloaded dataset, and the files read from it so far."""

    root: Path
    read: dict[str, SourceFile] = field(default_factory=dict)
    _stems: dict[str, dict[str, Path]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.root.exists():
            raise DatasetImportError(f"dataset folder not found: {self.root}")
        if not self.root.is_dir():
            raise DatasetImportError(f"dataset location must be a folder, got a file: {self.root}")

    def relative(self, path: Path) -> str:
        """A path as written in provenance columns: relative to the distribution's root when inside it."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def find(self, name: str, *folders: str, required: bool = True) -> Path | None:
        """The first of `folder/name` (folders tried in order; '' is the root) that is a file."""
        tried = [self.root / folder / name for folder in (folders or ("",))]
        for path in tried:
            if path.is_file():
                return path
        if required:
            shown = ", ".join(self.relative(p) for p in tried)
            raise DatasetImportError(f"{self.root}: missing list file {name} (looked for {shown})")
        return None

    def where(self, line: Line) -> str:
        """`relative/file:line`, the `source_record` of a row a list-file line defined."""
        return f"{self.relative(line.path)}:{line.number}"

    def record(self, path: Path) -> None:
        """Note a file of the distribution as read (its sha256 goes into the dataset card)."""
        key = self.relative(path)
        if key not in self.read:
            self.read[key] = SourceFile(path=key, sha256=file_sha256(path), bytes=path.stat().st_size)

    def lines(self, path: Path, sep: str | None = None) -> Iterator[Line]:
        """Non-blank lines of a UTF-8 text file, split on whitespace (or `sep`), numbered from 1."""
        self.record(path)
        try:
            with path.open("rb") as fh:
                number = 0
                while True:
                    raw = fh.readline(MAX_LINE_BYTES + 1)
                    if not raw:
                        return
                    number += 1
                    if len(raw) > MAX_LINE_BYTES:
                        raise DatasetImportError(f"{path}:{number}: line longer than {MAX_LINE_BYTES} bytes")
                    try:
                        text = raw.decode("utf-8").rstrip("\r\n")
                    except UnicodeDecodeError as exc:
                        raise DatasetImportError(f"{path}:{number}: not UTF-8 text ({exc.reason})") from exc
                    if number == 1:
                        text = text.lstrip("\ufeff")
                    if text.strip():
                        yield Line(path, number, text.split(sep) if sep else text.split())
        except OSError as exc:
            raise DatasetImportError(f"{path}: cannot read ({exc})") from exc

    def counted_table(self, path: Path, min_fields: int) -> Iterator[Line]:
        """DeepFashion list files: line 1 the row count, line 2 the entry names, then rows of >= `min_fields`.

        The declared count must equal the rows found.
        """
        rows = self.lines(path)
        first = next(rows, None)
        if first is None:
            raise DatasetImportError(f"{path}: empty file (expected a row count on line 1)")
        if len(first.fields) != 1 or not first.fields[0].isdigit():
            raise DatasetImportError(
                f"{path}:{first.number}: expected the number of rows, got {' '.join(first.fields)!r}"
            )
        declared = int(first.fields[0])
        if next(rows, None) is None:
            raise DatasetImportError(f"{path}: missing the entry-names line (line 2)")
        count = 0
        for line in rows:
            if len(line.fields) < min_fields:
                raise DatasetImportError(
                    f"{line.where}: expected at least {min_fields} fields, got {len(line.fields)}: "
                    f"{' '.join(line.fields)[:120]!r}"
                )
            count += 1
            yield line
        if count != declared:
            raise DatasetImportError(f"{path}: line 1 declares {declared} rows but the file has {count}")

    def json(self, path: Path) -> Any:
        """A parsed JSON file; malformed JSON is an error naming the file, line and column."""
        return _parse_json(path, self._json_text(path))

    def json_records(self, path: Path, what: str) -> list[tuple[str, Any]]:
        """The records of a JSON file holding a list, each with `file:line: record N` (the line it starts on)."""
        text = self._json_text(path)
        data = _parse_json(path, text)
        if not isinstance(data, list):
            raise DatasetImportError(f"{path}: expected a JSON list of {what}, got {type(data).__name__}")
        decoder = json.JSONDecoder()
        name = self.relative(path)
        out: list[tuple[str, Any]] = []
        at = _after_space(text, text.index("[") + 1)
        line, counted = 1, 0
        for number in range(len(data)):
            line += text.count("\n", counted, at)
            counted = at
            _, end = decoder.raw_decode(text, at)  # the file parsed above, so this cannot fail
            out.append((f"{name}:{line}: record {number}", data[number]))
            at = _after_space(text, _after_space(text, end) + 1)  # past the comma (or the closing bracket)
        return out

    def _json_text(self, path: Path) -> str:
        self.record(path)
        try:
            size = path.stat().st_size
            if size > MAX_JSON_BYTES:
                raise DatasetImportError(f"{path}: {size} bytes, larger than the {MAX_JSON_BYTES} a record file may be")
            data = path.read_bytes()
        except OSError as exc:
            raise DatasetImportError(f"{path}: cannot read ({exc})") from exc
        try:
            return data.decode("utf-8").lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise DatasetImportError(
                f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}: {exc.reason})"
            ) from exc

    def image_index(self, folder: Path) -> dict[str, Path]:
        """Image files anywhere under `folder` by file stem (name without suffix), built once per folder."""
        key = str(folder)
        if key not in self._stems:
            found: dict[str, Path] = {}
            if folder.is_dir():
                for dirpath, _dirs, files in os.walk(folder):
                    for name in files:
                        stem, suffix = os.path.splitext(name)
                        if suffix.lower() in IMAGE_SUFFIXES:
                            found.setdefault(stem, Path(dirpath) / name)
            self._stems[key] = found
        return self._stems[key]

    def source_files(self) -> list[SourceFile]:
        """Every file read, sorted by path."""
        return [self.read[k] for k in sorted(self.read)]


def _after_space(text: str, at: int) -> int:
    """The first position at or after `at` that is not JSON whitespace."""
    found = _JSON_SPACE.match(text, at)
    return found.end() if found else at


def _parse_json(path: Path, text: str) -> Any:
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetImportError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg}, column {exc.colno})") from exc
    except RecursionError as exc:
        raise DatasetImportError(f"{path}: JSON nested too deeply") from exc


def json_field(record: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """`record[key]`, checked to be of `kind` (bool is never an int here); an error names `where` and the key."""
    if not isinstance(record, dict):
        raise DatasetImportError(f"{where}: expected a JSON object, got {type(record).__name__}")
    if key not in record:
        raise DatasetImportError(f"{where}: missing field {key!r}")
    value = record[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise DatasetImportError(f"{where}: field {key!r} must be {_names(kinds)}, got {value!r}")
    if not isinstance(value, kinds):
        raise DatasetImportError(f"{where}: field {key!r} must be {_names(kinds)}, got {type(value).__name__}")
    return value


def _names(kinds: tuple[type, ...]) -> str:
    return " or ".join(
        {int: "an integer", float: "a number", str: "text", list: "a list", dict: "an object"}.get(k, k.__name__)
        for k in kinds
    )
