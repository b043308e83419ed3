"""Output folders: a folder is a lookbench run's only by the marker lookbench writes into it first, never by names."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench._util.atomic import write_text_atomic
from lookbench.errors import LookBenchError, first_problem

MARKER_NAME = ".lookbench-run.json"
MARKER_FORMAT: Literal["lookbench-run/1"] = "lookbench-run/1"
LOCK_NAME = ".lookbench-run.lock"
HOLDER_NAME = ".lookbench-run.holder.json"
"""Who holds the lock: pid, host, command and start (the lock file itself is truncated by every try to take it)."""


class OutputFolderError(LookBenchError):
    """An output folder is not this command's to write into, or its marker is not lookbench's."""


class RunMarker(BaseModel):
    """What lookbench writes first into a folder it claims: which command, run and config, and what it wrote."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    format: Literal["lookbench-run/1"]
    tool: Literal["lookbench"]
    command: str
    run_id: str
    config_hash: str | None
    created: str
    files: tuple[str, ...]


Entries = dict[str, tuple[int, int]]


def _entries(folder: Path) -> Entries:
    """Each top-level entry's (mtime_ns, size), the marker and atomic-write leftovers excepted."""
    found: Entries = {}
    for entry in folder.iterdir():
        if entry.name in (MARKER_NAME, LOCK_NAME, HOLDER_NAME) or entry.name.endswith(".tmp"):
            continue
        stat = entry.lstat()
        found[entry.name] = (stat.st_mtime_ns, stat.st_size)
    return found


def read_marker(folder: Path) -> RunMarker | None:
    """The folder's marker, or None where it has none; a marker that is not lookbench's is refused."""
    path = folder / MARKER_NAME
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise OutputFolderError(
            f"{path}: not a plain file, so not a marker lookbench wrote; remove it or choose another folder"
        )
    if not path.exists():
        return None
    try:
        return RunMarker.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise OutputFolderError(
            f"{path}: not a lookbench run marker ({first_problem(exc)}); remove it or choose another folder"
        ) from exc


def _write_marker(folder: Path, marker: RunMarker) -> None:
    write_text_atomic(folder / MARKER_NAME, marker.model_dump_json(indent=2) + "\n")


@dataclass
class Claim:
    """A folder this run may write into, and its entries when claimed (to record what the run wrote)."""

    folder: Path
    marker: RunMarker
    before: Entries = field(default_factory=dict)
    fresh: bool = False
    """The marker is this claim's own (the folder was new, empty, or taken over)."""
    made: bool = False
    """The folder did not exist before the claim."""

    def owns(self, name: str) -> bool:
        """Whether a top-level entry was written by a lookbench run into this folder."""
        return name in self.marker.files

    def refuse_unlisted(self, path: Path) -> None:
        """Refuse to replace an existing `path` that the folder's marker does not list (see `refuse_unlisted`)."""
        refuse_unlisted(path)

    def record(self) -> RunMarker:
        """Add the top-level entries the run created or changed to the marker's list of files it wrote."""
        if not self.folder.is_dir():
            return self.marker
        now = _entries(self.folder)
        written = {name for name, seen in now.items() if self.before.get(name) != seen}
        files = tuple(sorted((set(self.marker.files) & set(now)) | written))
        if files != self.marker.files:
            self.marker = self.marker.model_copy(update={"files": files})
            _write_marker(self.folder, self.marker)
        self.before = now
        return self.marker

    def release(self) -> None:
        """Record what a failed run wrote; take a fresh marker back from a folder it wrote nothing into."""
        written = self.record().files
        if not self.fresh or written:
            return
        (self.folder / MARKER_NAME).unlink(missing_ok=True)
        if self.made and not any(self.folder.iterdir()):
            self.folder.rmdir()

    @contextlib.contextmanager
    def recording(self) -> Iterator[Claim]:
        """Hold the folder against other lookbench runs and record what the block wrote into it; a failed run that
        wrote nothing leaves no marker either."""
        lock = hold(self.folder, self.marker.command)
        try:
            yield self
        except BaseException:
            unhold(self.folder, lock)
            self.release()
            raise
        unhold(self.folder, lock)
        self.record()


def unhold(folder: Path, lock: FileLock) -> None:
    """Give the folder's run lock back, leaving no lock file behind."""
    (folder / HOLDER_NAME).unlink(missing_ok=True)
    Path(lock.lock_file).unlink(missing_ok=True)
    lock.release()


def hold(folder: Path, command: str) -> FileLock:
    """Take `folder`'s run lock at once, or refuse naming the run that holds it (its pid, host and start)."""
    lock = FileLock(str(folder / LOCK_NAME), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        try:
            holder = json.loads((folder / HOLDER_NAME).read_text(encoding="utf-8"))
            who = f"lookbench {holder['command']} (pid {holder['pid']} on {holder['host']}, since {holder['started']})"
        except (OSError, ValueError, KeyError, TypeError):
            who = "another lookbench run"
        raise OutputFolderError(
            f"{folder}: {who} is writing into it; wait for it to end or choose another folder"
        ) from None
    holder = {
        "command": command,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    write_text_atomic(folder / HOLDER_NAME, json.dumps(holder) + "\n")
    return lock


def claim_output_folder(
    folder: Path, command: str, *, config_hash: str | None = None, overwrite: bool = False, also_marks: str = ""
) -> Claim:
    """Claim `folder` for `command`: a new or empty folder is created and marked first; a folder marked by the same
    command (and config, where `config_hash` is given) is taken as it is; anything else is refused unless
    `overwrite`, which takes the folder over and deletes nothing. `also_marks`: an older marker file of this command.
    """
    folder = Path(folder)
    if (folder.exists() and not folder.is_dir()) or (folder.is_symlink() and not folder.exists()):
        raise OutputFolderError(f"{folder}: exists and is not a folder; lookbench {command} writes into a folder")
    refuse_blocked_parent(folder)
    marker = read_marker(folder) if folder.is_dir() else None
    before = _entries(folder) if folder.is_dir() else {}
    if marker is not None:
        refusal = _refusal(folder, marker, command, config_hash)
        if refusal and not overwrite:
            raise OutputFolderError(refusal)
        if not refusal:
            return Claim(folder, marker, before)
        owned = marker.files
    elif also_marks and (folder / also_marks).is_file():
        owned = tuple(sorted(before))
    elif before and not overwrite:
        raise OutputFolderError(
            f"{folder}: not empty and not marked as a lookbench run folder ({MARKER_NAME}); "
            f"choose a new or empty folder, or pass --overwrite to write {command}'s files beside what it holds"
        )
    else:
        owned = ()
    fresh = RunMarker(
        format=MARKER_FORMAT,
        tool="lookbench",
        command=command,
        run_id=secrets.token_hex(8),
        config_hash=config_hash,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        files=owned,
    )
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    _write_marker(folder, fresh)
    return Claim(folder, fresh, before, fresh=True, made=made)


def _refusal(folder: Path, marker: RunMarker, command: str, config_hash: str | None) -> str:
    """Why a marked folder is not this run's to continue in ('' where it is)."""
    if marker.command != command:
        return (
            f"{folder}: holds the output of lookbench {marker.command}, not {command}; "
            "choose another folder, or pass --overwrite to write beside it"
        )
    if config_hash is not None and marker.config_hash is not None and marker.config_hash != config_hash:
        return f"{folder}: holds a {command} run of another config; use the same config, or --overwrite to start again"
    return ""


@contextlib.contextmanager
def output_folder(
    folder: Path, command: str, *, config_hash: str | None = None, overwrite: bool = False
) -> Iterator[Claim]:
    """Claim `folder` (see `claim_output_folder`) and record what the block wrote into it, even if it fails."""
    with claim_output_folder(folder, command, config_hash=config_hash, overwrite=overwrite).recording() as claim:
        yield claim


def refuse_unlisted(path: Path) -> None:
    """Refuse to replace or remove an existing `path` that its folder's marker does not list as a lookbench run's."""
    if not (path.exists() or path.is_symlink()):
        return
    marker = read_marker(path.parent)
    if marker is None or path.name not in marker.files:
        raise OutputFolderError(
            f"{path}: exists and {path.parent / MARKER_NAME} does not list it as written by lookbench, so --overwrite "
            "will not replace it; move it away or choose another output folder"
        )


def refuse_blocked_parent(path: Path) -> None:
    """Refuse, before any work, an output path under something that is not a folder (it could never be written)."""
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise OutputFolderError(f"{path}: {parent} is not a folder; choose another output path")
            return


def refuse_foreign_file(path: Path, ours: bool, overwrite: bool) -> None:
    """Refuse to replace an existing file lookbench did not write (`ours`: it reads as this command's output)."""
    refuse_blocked_parent(path)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise OutputFolderError(f"{path}: not a plain file; choose another output path")
    if path.exists() and not ours and not overwrite:
        raise OutputFolderError(
            f"{path}: exists and was not written by lookbench; choose another path, or pass --overwrite to replace it"
        )
