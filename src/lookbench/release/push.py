"""Push a published version and the root card to the Hugging Face Hub (`hf://owner/name`) or a local mirror folder."""

from __future__ import annotations

import shutil
from pathlib import Path

from lookbench.errors import ReleaseError
from lookbench.snapshot.manifest import verify_manifest
from lookbench.snapshot.source import parse_hub_uri


def push_release(output: Path, version: str, target: str) -> str:
    """Upload `output/version` and `output/README.md`; return where they went."""
    folder = output / version
    verify_manifest(folder)
    if target.startswith("hf://"):
        return _push_hub(output, version, target)
    mirror = Path(target).expanduser()
    if (mirror / version).exists():
        raise ReleaseError(f"{mirror / version} already exists; published versions are never overwritten")
    mirror.mkdir(parents=True, exist_ok=True)
    staging = mirror / f".{version}.push"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(folder, staging)
    staging.rename(mirror / version)
    shutil.copy2(output / "README.md", mirror / "README.md")
    return str(mirror / version)


def _push_hub(output: Path, version: str, target: str) -> str:
    repo, revision, _ = parse_hub_uri(target)
    try:
        from huggingface_hub import HfApi
    except ImportError as exc:
        raise ReleaseError("--push hf://... needs huggingface_hub: pip install 'lookbench[release]'") from exc
    api = HfApi()
    try:
        api.create_repo(repo, repo_type="dataset", exist_ok=True)
        api.upload_folder(
            repo_id=repo,
            repo_type="dataset",
            folder_path=str(output / version),
            path_in_repo=version,
            revision=revision,
            commit_message=f"Add {version}",
        )
        api.upload_file(
            path_or_fileobj=str(output / "README.md"),
            path_in_repo="README.md",
            repo_id=repo,
            repo_type="dataset",
            revision=revision,
            commit_message=f"Card for {version}",
        )
    except Exception as exc:  # network, auth and permission errors all end the same way for the user
        raise ReleaseError(f"push to {target} failed: {type(exc).__name__}: {exc}") from exc
    return f"hf://{repo}/{version}"
