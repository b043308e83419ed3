"""Model-card facts, the two contamination rules, window recomputation and `--since cutoff`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from site_fixtures import synth_data_fixture, synth_runs_fixture  # noqa: F401
from typer.testing import CliRunner

from lookbench._util.dates import date_as_given
from lookbench.cli.main import app
from lookbench.embeddings.precomputed import PrecomputedEmbeddings
from lookbench.errors import LookBenchError
from lookbench.evaluation.contamination.assess import cutoff_since
from lookbench.evaluation.contamination.flags import contamination_flags
from lookbench.evaluation.contamination.tables import load_with_per_query
from lookbench.evaluation.window import rewindow
from lookbench.models import registry
from lookbench.models.meta import ModelMeta, ModelRun

runner = CliRunner()


def test_fact_sheets_read_partial_dates_and_sizes() -> None:
    facts = ModelMeta(release_date="2025-06", training_cutoff="unknown", training_data=["laion", " "], params="1.5e8")
    assert facts.release_day == dt.date(2025, 6, 30)  # a month stands for its whole period: its last day
    assert facts.cutoff_day is None
    assert facts.training_data == ("laion",)
    assert facts.parameters == 150_000_000
    described = ModelMeta(training_cutoff="2012 (ImageNet-1k collection)", params="4.7M")
    assert described.cutoff_day == dt.date(2012, 12, 31) and described.parameters == 4_700_000
    assert ModelMeta(params="0.3B").parameters == 300_000_000 and ModelMeta(params="~88M").parameters is None
    assert ModelMeta(release_date="2026-01-20T10:00:00+00:00").release_day == dt.date(2026, 1, 20)
    assert ModelMeta(release_date=dt.date(2026, 1, 2)).release_date == "2026-01-02"  # type: ignore[arg-type]


def test_fact_sheets_refuse_what_they_cannot_read() -> None:
    with pytest.raises(ValidationError, match="release_date"):
        ModelMeta(release_date="soon")
    with pytest.raises(ValidationError, match="licence"):
        ModelMeta.model_validate({"licence": "mit"})


def test_partial_dates_are_shown_as_given() -> None:
    facts = ModelMeta(release_date="2020-03", training_cutoff="2012 (ImageNet-1k collection)")
    assert (facts.release_text, facts.cutoff_text) == ("2020-03", "2012")
    assert facts.release_day == dt.date(2020, 3, 31)  # compared as the period's last day, shown as written
    assert (
        date_as_given("2026-01-20T10:00:00+00:00") == "2026-01-20"
        and date_as_given(dt.date(2026, 1, 2)) == "2026-01-02"
    )
    assert date_as_given("unknown") is None and date_as_given("soon") is None and date_as_given(None) is None
    month = ModelMeta(training_cutoff="2026-01")
    reason = contamination_flags(month, dt.date(2026, 1, 1), "v20260201")[0].reason
    assert reason == "training cutoff 2026-01 is on or after the window start 2026-01-01"


def test_flag_rules() -> None:
    start = dt.date(2026, 1, 1)
    old = ModelMeta(release_date="2025-06-01", training_cutoff="2025-05-01")
    assert contamination_flags(old, start, "v20260201") == []
    on_start = ModelMeta(training_cutoff=start.isoformat())
    assert [f.kind for f in contamination_flags(on_start, start, "v20260201")] == ["date"]
    released_later = ModelMeta(release_date="2026-03-01", training_cutoff="2025-12-31")
    assert contamination_flags(released_later, start, "v20260201") == []  # the cutoff is the better evidence
    no_cutoff = ModelMeta(release_date="2026-03-01")
    assert [f.reason for f in contamination_flags(no_cutoff, start, "v20260201")] == [
        "release date 2026-03-01 is on or after the window start 2026-01-01"
    ]
    assert [f.kind for f in contamination_flags(ModelMeta(), start, "v20260201")] == ["unknown"]
    trained = ModelMeta(release_date="2020-01-01", training_data=("V20260201", "shop", "laion"))
    flags = contamination_flags(trained, start, "v20260201", sources={"shop"})
    assert [f.kind for f in flags] == ["data", "data"]
    assert "snapshot v20260201" in flags[0].reason and "'shop'" in flags[1].reason
    assert [f.kind for f in contamination_flags(trained, start, "v20251201")] == []


def _record(card: ModelMeta | None) -> ModelRun:
    return (card or ModelMeta()).merged(spec="x:m").result_record("m")


def test_cutoff_since() -> None:
    assert cutoff_since(_record(ModelMeta(training_cutoff="2025-12-31"))) == np.datetime64("2026-01-01", "us")
    with pytest.raises(LookBenchError, match="training_cutoff='unknown'"):
        cutoff_since(_record(ModelMeta(training_data=("laion",))))
    with pytest.raises(LookBenchError, match="m has no model card"):
        cutoff_since(_record(None))
    # no declared cutoff: the release date bounds it (the last day of a partial date)
    released = ModelMeta(training_cutoff="unknown", release_date="2023-04")
    assert cutoff_since(_record(released)) == np.datetime64("2023-05-01", "us")
    assert released.cutoff_bound() == (dt.date(2023, 4, 30), "2023-04", True)
    assert ModelMeta(training_cutoff="2025-05-31", release_date="2025-06-01").cutoff_bound() == (
        dt.date(2025, 5, 31),
        "2025-05-31",
        False,
    )


def _eval(snapshot: Path, emb: Path, out: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    r = runner.invoke(app, ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", str(out), *extra])
    assert r.exit_code == 0, r.output
    return json.loads(out.read_text())


def test_tables_since_matches_eval_since(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    snapshot, paths = synth_runs
    emb = paths[0].parent.parent / "emb" / "sharp"
    full = _eval(snapshot, emb, tmp_path / "full.json", "--resamples", "200")
    direct = _eval(snapshot, emb, tmp_path / "direct.json", "--resamples", "200", "--since", "2026-01-01")
    # 24 queries are dated 2026; outfit look-4 (one 2025 crop, two 2026 crops) is dropped whole: 22 kept
    assert direct["config"]["window"] == {"since": "2026-01-01", "until": None, "kept_queries": 22, "total_queries": 48}
    result, per_query = load_with_per_query(tmp_path / "full.json")
    assert per_query is not None
    again = rewindow(result, per_query, np.datetime64("2026-01-01", "us"), None)
    assert again.config.window is not None and again.config.window.model_dump() == direct["config"]["window"]
    for scope, metrics in direct["metrics"].items():
        for name, value in metrics.items():
            assert again.metrics[scope][name].model_dump() == pytest.approx(value), (scope, name)
    assert again.snapshot.subsets["real_studio_flat"].queries == 12
    assert full["metrics"]["overall"]["fine_recall@1"]["n"] == 48

    r = runner.invoke(
        app, ["tables", str(tmp_path / "full.json"), "--since", "2026-01-01", "--out", str(tmp_path / "t")]
    )
    assert r.exit_code == 0, r.output
    rows = [line.split(",") for line in (tmp_path / "t" / "tables.csv").read_text().splitlines()[1:]]
    overall = next(row for row in rows if row[1] == "fine_recall@1" and row[2] == "overall")
    assert float(overall[3]) == pytest.approx(direct["metrics"]["overall"]["fine_recall@1"]["value"])
    assert overall[6] == "22"


def test_tables_show_flags(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    r = runner.invoke(app, ["tables", *map(str, paths), "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "tables.md").read_text()
    assert "| sharp |" in md and "| twin ‡ |" in md and "†?" in md
    assert "‡ twin: training cutoff 2025-12-20 is on or after the window start 2025-12-01" in md
    assert "† " in md and "snapshot v20260201" in md and "source 'shop'" in md
    r = runner.invoke(app, ["tables", *map(str, paths), "--since", "2026-01-15", "--out", str(tmp_path / "late")])
    assert r.exit_code == 0, r.output
    late = (tmp_path / "late" / "tables.md").read_text()
    assert "| twin |" in late and "twin:" not in late  # its cutoff precedes this window; released in it, though


def test_eval_since_cutoff_reads_the_card(
    synth_runs: tuple[Path, list[Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot, paths = synth_runs

    class Carded(PrecomputedEmbeddings):
        def describe(self) -> ModelRun:
            card = ModelMeta.model_validate_json(self.root.joinpath("card.json").read_text())
            described = super().describe()
            meta = described.meta.merged(**card.model_dump(exclude_defaults=True))
            return described.model_copy(update={"name": "carded", "meta": meta})

    monkeypatch.setitem(
        registry.KINDS, "carded", registry.ModelKind("carded", lambda spec, _opts: Carded(spec.argument))
    )
    emb = paths[0].parent.parent / "emb" / "sharp"
    (emb / "card.json").write_text(json.dumps({"training_cutoff": "2025-12-31"}))
    out = tmp_path / "cut.json"
    r = runner.invoke(app, ["eval", "-s", str(snapshot), "-m", f"carded:{emb}", "-o", str(out), "--since", "cutoff"])
    assert r.exit_code == 0, r.output
    window = json.loads(out.read_text())["config"]["window"]
    assert window == {"since": "2026-01-01", "until": None, "kept_queries": 22, "total_queries": 48}
    (emb / "card.json").write_text(json.dumps({"training_cutoff": None, "license": "mit"}))
    r = runner.invoke(app, ["eval", "-s", str(snapshot), "-m", f"carded:{emb}", "-o", str(out), "--since", "cutoff"])
    assert r.exit_code == 2 and "--since cutoff: carded declares training_cutoff='unknown'" in r.output.replace(
        "\n", ""
    )
    (emb / "card.json").unlink()


def test_tables_since_each_cards_cutoff(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    r = runner.invoke(app, ["tables", str(paths[0]), str(paths[1]), "--since", "cutoff", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    rows = [line.split(",") for line in (tmp_path / "tables.csv").read_text().splitlines()[1:]]
    counts = {row[0]: row[6] for row in rows if row[1] == "fine_recall@1" and row[2] == "overall"}
    assert counts == {"sharp": "48", "twin": "22"}  # cutoffs 2025-05 and 2025-12-20; outfit look-4 dropped whole
    r = runner.invoke(app, ["tables", str(paths[2]), "--since", "cutoff"])
    assert r.exit_code == 2 and "declares training_cutoff='unknown'" in r.output.replace("\n", "")
