"""The newer surfaces under hostile input: audit, eval --noise, card, tables --format, the mteb: kind, date windows.

Each input gives a correct result or one clean line with exit 2; names stay inert text in every format written."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from hostilekit import clean_error, evaluate, invoke, make_snapshot, snapshot_spec, vectors, write_vectors

from lookbench.results.audit_io import audit_markdown, read_audit

NAMES = {
    "latex": r"A&B_1 #2 $x$ \end{tabular} 50% ~^{}",
    "formula": '=HYPERLINK("http://evil")',
    "plus": "+cmd|' /C calc'!A0",
    "at": "@SUM(A1)",
    "pipes": "a | b || c",
    "front-matter": "name\n---\nmodel-index: []\n...",
    "html": '<script>alert(1)</script><img src=x onerror="y">',
}
DATES = {
    "impossible": "2026-02-30",
    "year-0": "0000-01-01",
    "last-day": "9999-12-31",
    "offset": "2026-03-01T00:00:00+14:00",
    "zulu": "2026-03-01Z",
    "empty": "",
    "blank": " ",
    "offset-past-9999": "9999-12-31T23:00:00-05:00",
    "offset-before-1": "0001-01-01T00:00:00+14:00",
    "short": "2026-3-1",
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("surfaces")
    snap = make_snapshot(root / "s")
    found = {"snapshot": snap}
    for key, name in NAMES.items():
        emb = write_vectors(root / f"e-{key}", vectors(), card={"name": name})
        found[f"emb-{key}"] = emb
        found[key] = root / f"{key}.json"
        evaluate(snap, emb, found[key])
    return found


@pytest.mark.parametrize("key", NAMES)
def test_audit_keeps_a_hostile_model_name_inert(runs: dict[str, Path], tmp_path: Path, key: str) -> None:
    out = tmp_path / "audit.json"
    args = ["--per-side", "4", "--queries", "2", "--resamples", "5", "-o", str(out), "--cache-dir", str(tmp_path)]
    # what is tested is the name, so the cheapest audit that still has a probe and a shortcuts table
    args += ["--permutations", "20", "--alpha", "0.1", "--baselines", "features:size,features:thumbnail"]
    run = invoke("audit", str(runs["snapshot"]), "-m", f"embeddings:{runs[f'emb-{key}']}", *args)
    assert run.exit_code == 0, run.output
    report = read_audit(out)
    assert report.separability.embedding_probe is not None
    assert report.separability.embedding_probe.model == NAMES[key]  # nothing lost
    assert report.shortcuts is not None and report.shortcuts.reference == NAMES[key]
    lines = audit_markdown(report)
    probe = next(line for line in lines if line.startswith("- linear probe"))
    assert "\n" not in "".join(lines) and "<script" not in probe and "<img" not in probe
    assert "|" not in probe.replace("\\|", "")
    named = next(line for line in lines if line.startswith("| reference"))
    assert "<script" not in named and "<img" not in named
    assert named.replace("\\|", "").count("|") == 2 + len(report.shortcuts.baselines[0].scores)  # no extra cell


def test_audit_output_that_cannot_be_written_is_one_line_before_any_work(runs: dict[str, Path], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    args = ["--per-side", "4", "--queries", "2", "--resamples", "5", "-o", str(blocker / "audit.json")]
    args += ["--cache-dir", str(tmp_path / "cache")]
    clean_error(invoke("audit", str(runs["snapshot"]), *args), str(blocker))
    assert not (tmp_path / "cache").exists() and blocker.read_text() == "x"  # refused before embedding anything


@pytest.mark.parametrize("key", ["latex", "formula", "pipes", "front-matter"])
def test_eval_without_noise_keeps_names_inert(runs: dict[str, Path], tmp_path: Path, key: str) -> None:
    out = tmp_path / "r.json"
    result = evaluate(runs["snapshot"], runs[f"emb-{key}"], out, "--noise", "none")
    assert result["config"]["noise"] == "none" and result["model"]["name"] == NAMES[key]
    assert invoke("tables", str(out), "--out", str(tmp_path / "t")).exit_code == 0
    rows = list(csv.reader(io.StringIO((tmp_path / "t" / "tables.csv").read_text())))[1:]
    assert rows and all(not row[0].startswith(("=", "+", "-", "@")) and "[no noise]" in row[0] for row in rows)


@pytest.mark.parametrize("value", ["bogus", "", "NONE;rm"])
def test_eval_noise_takes_only_its_choices(runs: dict[str, Path], value: str) -> None:
    emb = runs["emb-latex"]
    run = invoke("eval", "-s", str(runs["snapshot"]), "-m", f"embeddings:{emb}", "--noise", value)
    clean_error(run, "--noise")


@pytest.mark.parametrize("key", NAMES)
def test_card_front_matter_survives_hostile_names(runs: dict[str, Path], tmp_path: Path, key: str) -> None:
    readme = tmp_path / "README.md"
    body = "# Model\n\n---\n\nText after a rule.\n"
    readme.write_text(body, encoding="utf-8")
    run = invoke("card", str(runs[key]), "--readme", str(readme), "--dataset", "owner/name")
    assert run.exit_code == 0, run.output
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("---\n") and text.endswith(body)
    front = yaml.safe_load(text[4 : text.index("\n---\n", 4)])
    assert [entry["name"] for entry in front["model-index"]] == [NAMES[key]]


@pytest.mark.parametrize("fmt", ["latex", "csv", "markdown"])
def test_paper_tables_keep_every_hostile_name(runs: dict[str, Path], tmp_path: Path, fmt: str) -> None:
    results = [str(runs[key]) for key in NAMES]
    run = invoke("tables", *results, "--format", fmt, "--out", str(tmp_path))
    assert run.exit_code == 0, run.output
    text = next(p for p in tmp_path.iterdir() if not p.name.startswith(".")).read_text(
        encoding="utf-8"
    )  # not the marker
    body = [line for line in text.splitlines() if line.strip()]
    assert len([line for line in body if "100.00" in line]) == len(NAMES)  # one line per run: nothing lost or split
    if fmt == "markdown":  # LaTeX and CSV show markup as text; Markdown would run it
        assert "<script" not in text and "<img" not in text
    if fmt == "csv":
        assert not [row for row in csv.reader(io.StringIO(text)) if row[0].startswith(("=", "+", "-", "@"))]
    if fmt == "latex":
        assert text.count(r"\end{tabular}") == 1 and "50%" not in text


@pytest.mark.parametrize("spec", ["mteb:", "mteb:@rev", "mteb:name\n---", "mteb:../../etc/passwd"])
def test_mteb_specs_are_refused_in_one_line(runs: dict[str, Path], spec: str) -> None:
    run = invoke("eval", "-s", str(runs["snapshot"]), "-m", spec, "-o", str(runs["snapshot"].parent / "m.json"))
    text = clean_error(run, "mteb:")
    assert text.count("error:") == 1


@pytest.mark.parametrize("option", ["--since", "--until"])
@pytest.mark.parametrize("name", DATES)
def test_date_windows_take_only_real_days(runs: dict[str, Path], tmp_path: Path, option: str, name: str) -> None:
    value = DATES[name]
    out = tmp_path / "w.json"
    evaluated = invoke(
        "eval", "-s", str(runs["snapshot"]), "-m", f"embeddings:{runs['emb-latex']}", "-o", str(out),
        "--resamples", "5", option, value,
    )  # fmt: skip
    tabled = invoke("tables", str(runs["latex"]), option, value)
    for run in (evaluated, tabled):
        if run.exit_code != 0:
            clean_error(run)  # a refusal is one line, exit 2
            assert option in run.output or "no queries" in run.output, run.output
    if name in {"impossible", "year-0", "empty", "blank", "offset-past-9999", "offset-before-1", "short"}:
        clean_error(evaluated, option)
        clean_error(tabled, option)
    if name in {"offset", "zulu"}:
        assert evaluated.exit_code == 0 and tabled.exit_code == 0
        window = json.loads(out.read_text())["config"]["window"]
        assert window[option.removeprefix("--")] == "2026-03-01" if name == "zulu" else window is not None


SERIES_CARDS = {
    "last-day": {"name": "</script><script>alert(1)</script>", "training_cutoff": "9999-12-31"},
    "first-month": {"name": "x\n---\ny", "release_date": "0001-01"},
    "offset": {"name": "=1+1 | *b*", "training_cutoff": "2025-01-01T00:00:00+14:00"},
    "unknown": {"name": r"\end{tabular}", "release_date": "unknown"},
}


def test_the_series_view_takes_odd_card_dates_and_names(tmp_path: Path) -> None:
    results = []
    for version in ("v20260301", "v20260401"):
        snap = make_snapshot(tmp_path / version, version=version)
        for key, card in SERIES_CARDS.items():
            out = tmp_path / "runs" / f"{version}-{key}.json"
            evaluate(snap, write_vectors(tmp_path / f"e-{version}-{key}", vectors(), card=card), out)
            results.append(str(out))
    run = invoke("leaderboard", *results, "--out", str(tmp_path / "site"))
    assert run.exit_code == 0, run.output
    data = json.loads((tmp_path / "site" / "data.json").read_text(encoding="utf-8"))
    series = {row["model"]: row for row in data["series"]["models"]}
    assert sorted(series) == sorted(card["name"] for card in SERIES_CARDS.values())  # nothing lost
    assert series[SERIES_CARDS["last-day"]["name"]]["bound"]["day"] == "9999-12-31"
    assert series[SERIES_CARDS["unknown"]["name"]]["bound"] is None
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "</script><script>" not in page


@pytest.mark.parametrize("noise", ["none", "all"])
def test_eval_names_an_unreadable_noise_file(runs: dict[str, Path], tmp_path: Path, noise: str) -> None:
    snap = make_snapshot(tmp_path / "s")
    (snap / "noise" / "gallery.parquet").write_bytes(b"=cmd|x")
    emb = runs["emb-latex"]
    run = invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "--noise", noise, "-o", str(tmp_path / "r.json"))
    clean_error(run, str(snap / "noise" / "gallery.parquet"), "not a readable parquet file")
    assert not (tmp_path / "r.json").exists()


def _registry_entry(name: str, release_date: object) -> object:
    from types import SimpleNamespace

    return SimpleNamespace(
        name=name, release_date=release_date, n_parameters=10, license="mit", open_weights=True, reference=None,
        get_training_datasets=lambda: {"CUB200I2IRetrieval"},
    )  # fmt: skip


@pytest.mark.parametrize("release_date", ["2026-02-30", "0000-01-01", "soon"])
def test_an_mteb_entry_with_an_impossible_release_date_is_named(release_date: str) -> None:
    from lookbench.models.mteb_model import MtebModelError, card_facts

    with pytest.raises(MtebModelError, match=r"mteb:org/m: its ModelMeta's release_date: .*" + release_date):
        card_facts(_registry_entry("org/m", release_date))


@pytest.mark.parametrize("key", NAMES)
def test_an_mteb_entry_keeps_a_hostile_name(key: str) -> None:
    import datetime as dt

    from lookbench.models.mteb_model import card_facts

    facts = card_facts(_registry_entry(NAMES[key], dt.date(2025, 6, 1)))
    assert facts.name == NAMES[key] and facts.release_date == "2025-06-01"


@pytest.mark.parametrize("extra", [[], ["--model", "features:thumbnail"]], ids=["baselines", "model"])
def test_audit_leaves_out_and_lists_an_undecodable_noise_image(tmp_path: Path, extra: list[str]) -> None:
    from conftest import make_row

    spec = snapshot_spec()
    noise = [make_row(f"n{i}", "bag", "black", seed=20 + i) for i in range(20)]
    junk = {**make_row("junk", "bag", "black"), "image": {"bytes": b"not an image", "path": "junk.png"}}
    spec["noise"]["gallery"] = [*noise, junk]
    snap = make_snapshot(tmp_path / "snap", spec)
    result = invoke("audit", str(snap), "--output", str(tmp_path / "a.json"), *extra)
    assert result.exit_code == 0, result.output
    report = read_audit(tmp_path / "a.json")
    assert [(s.subset, s.split, s.row) for s in report.skipped_images] == [("noise", "gallery", 20)]
    assert report.sampling.noise_sampled == 20
