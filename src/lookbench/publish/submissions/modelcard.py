"""`model-index` metadata for Hub model cards: a result's numbers as `huggingface_hub` EvalResults, merged into a
README's YAML front matter (the rest of the file untouched), pushed through `huggingface_hub` on request."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lookbench._util.atomic import write_bytes_atomic
from lookbench._util.yamlfile import parse_yaml
from lookbench.errors import LookBenchError, SubmissionError
from lookbench.metrics.definitions import OUTFIT_METRIC
from lookbench.results.schema import ResultFile
from lookbench.results.tables import DEFAULT_TABLE_METRICS, ordered_scopes, scope_title, short_metric
from lookbench.snapshot.source import parse_hub_uri

TASK_TYPE = "image-feature-extraction"
"""The Hub pipeline tag of an image-embedding model, the task LookBench evaluates."""
TASK_NAME = "Fashion image retrieval (LookBench)"
CARD_METRICS = (*DEFAULT_TABLE_METRICS, OUTFIT_METRIC)
_FRONT = re.compile(r"\A---[ \t]*(\r?\n)(.*?)(?:\r?\n)?^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
"""A YAML front matter block at the very start of a README (what the Hub reads as its metadata)."""


@dataclass(frozen=True)
class DatasetRef:
    """The Hub dataset a result's snapshot was published as."""

    repo: str
    revision: str | None


def dataset_of(result: ResultFile, result_path: Path, dataset: str | None) -> DatasetRef:
    """The dataset id and revision: `dataset` when given, else the result's `hf://` snapshot location."""
    location = result.snapshot.location
    if dataset is not None:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", dataset):
            raise SubmissionError(f"--dataset {dataset!r}: expected a Hub dataset id, owner/name")
        return DatasetRef(dataset, None)
    if not location.startswith("hf://"):
        raise SubmissionError(
            f"{result_path}: field snapshot.location is a local folder ({location}); "
            "give --dataset OWNER/NAME, the Hub dataset it was published as"
        )
    try:
        repo, revision, _ = parse_hub_uri(location)
    except LookBenchError as exc:
        raise SubmissionError(f"{result_path}: field snapshot.location: {exc}") from exc
    return DatasetRef(repo, revision)


def eval_results(result: ResultFile, dataset: DatasetRef, metrics: tuple[str, ...] = CARD_METRICS) -> list[Any]:
    """One `huggingface_hub.EvalResult` per scope (subset or overall) and metric, values in percent."""
    from huggingface_hub import EvalResult

    out = []
    for scope in ordered_scopes(result.metrics):
        for metric in metrics:
            value = result.metrics[scope].get(metric)
            if value is None:
                continue
            out.append(
                EvalResult(
                    task_type=TASK_TYPE,
                    task_name=TASK_NAME,
                    dataset_type=dataset.repo,
                    dataset_name=f"LookBench {result.snapshot.id} {scope_title(scope)}",
                    dataset_config=result.snapshot.id,
                    dataset_split=scope,
                    dataset_revision=dataset.revision,
                    dataset_args={"fine_rule": result.config.fine_rule, "content_hash": result.snapshot.content_hash},
                    metric_type=metric,
                    metric_name=short_metric(metric),
                    metric_value=round(100 * value.value, 2),
                    metric_args={"ci_low": round(100 * value.ci_low, 2), "ci_high": round(100 * value.ci_high, 2)},
                )
            )
    return out


def _key(entry: Any) -> tuple[Any, ...]:
    return (entry.task_type, entry.dataset_type, entry.dataset_config, entry.dataset_split, entry.metric_type)


def merged_model_index(front: dict[str, Any], model: str, new: list[Any], readme: Path | str) -> list[Any]:
    """The front matter's `model-index` with `new` replacing the entries of the same task, dataset, config, split
    and metric, and added otherwise; entries of other tasks or datasets are kept as they were."""
    from huggingface_hub.repocard_data import eval_results_to_model_index, model_index_to_eval_results

    existing = front.get("model-index")
    if existing is None:
        return list(eval_results_to_model_index(model, new))
    try:
        name, old = model_index_to_eval_results(existing)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise SubmissionError(f"{readme}: field model-index is malformed ({type(exc).__name__}: {exc})") from exc
    replaced = {_key(e) for e in new}
    kept = [e for e in old if _key(e) not in replaced]
    return list(eval_results_to_model_index(name, kept + new))


def split_front_matter(text: str, readme: Path | str) -> tuple[dict[str, Any], str]:
    """(front matter as a mapping, the rest of the README byte for byte); a README without one has `{}`."""
    match = _FRONT.match(text)
    if match is None:
        if text.startswith("---"):
            raise SubmissionError(f"{readme}: front matter: the opening --- line has no closing --- line")
        return {}, text
    data = parse_yaml(match.group(2), f"{readme} (front matter)")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SubmissionError(f"{readme}: front matter is a YAML {type(data).__name__}, not a mapping of fields")
    return data, text[match.end() :]


def card_text(result: ResultFile, readme_text: str, readme: Path | str, dataset: DatasetRef) -> str:
    """The README with the result's `model-index` merged into its front matter; the body is left as it was."""
    front, body = split_front_matter(readme_text, readme)
    front["model-index"] = merged_model_index(front, result.model_name, eval_results(result, dataset), readme)
    newline = "\r\n" if "\r\n" in readme_text[:200] else "\n"
    dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
    return f"---{newline}{dumped.replace(chr(10), newline)}---{newline}{body}"


def write_card(result: ResultFile, readme: Path, dataset: DatasetRef) -> str:
    """Merge into `readme` (created when absent) atomically; return the text written."""
    try:
        before = readme.read_bytes().decode("utf-8") if readme.exists() else ""  # keeps CRLF as it is
    except UnicodeDecodeError as exc:
        raise SubmissionError(f"{readme}: not UTF-8 text ({exc})") from exc
    text = card_text(result, before, readme, dataset)
    write_bytes_atomic(readme, text.encode("utf-8"))
    return text


def push_card(result: ResultFile, repo_id: str, dataset: DatasetRef) -> str:
    """Update the Hub model repo's card metadata through `huggingface_hub.metadata_update`; return the commit URL."""
    from huggingface_hub import metadata_update

    index = merged_model_index({}, result.model_name, eval_results(result, dataset), repo_id)
    try:
        return str(metadata_update(repo_id, {"model-index": index}, overwrite=True))
    except Exception as exc:  # network, auth and missing-repo errors all end the same way for the user
        raise SubmissionError(f"cannot update the card of {repo_id}: {type(exc).__name__}: {exc}") from exc
