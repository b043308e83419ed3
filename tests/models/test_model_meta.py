"""ModelMeta: one strict type for a model's facts and spec, round-tripped through JSON, its errors one per field."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from lookbench.errors import LookBenchError, first_problem
from lookbench.models.card import load_cards, parse_card
from lookbench.models.meta import FACT_FIELDS, ModelMeta, ModelRun
from lookbench.models.spec import ModelSpec


def test_every_shipped_card_round_trips_through_json() -> None:
    for card in load_cards().values():
        assert ModelMeta.model_validate_json(card.model_dump_json()) == card, card.id
        assert ModelMeta.model_validate(json.loads(card.model_dump_json())) == card, card.id


def test_a_card_holds_its_spec_loader_and_facts() -> None:
    card = load_cards()["efficientnet-lite0"]
    assert card.loader == ModelSpec("builtin", "efficientnet-lite0")
    assert str(card.loader) == card.spec
    assert (card.embed_dim, card.parameters, card.open_weights) == (1280, 4_700_000, True)
    assert card.fact_sheet() is not None and list(card.fact_sheet() or {}) == list(FACT_FIELDS)
    assert ModelMeta().loader is None and ModelMeta().fact_sheet() is None


def test_one_parser_reads_a_spec_text() -> None:
    assert ModelSpec.parse("hf:org/model?pool=cls") == ModelSpec("hf", "org/model?pool=cls")
    assert ModelSpec.parse("open_clip:hf-hub:Marqo/x") == ModelSpec("open_clip", "hf-hub:Marqo/x")
    for text in ("efficientnet-lite0", ":x", "hf:", ""):
        assert ModelSpec.parse(text) is None and ModelMeta(spec=text).loader is None, text
        with pytest.raises(LookBenchError, match="bad model spec"):
            ModelSpec.split(text)


def test_the_result_record_is_the_meta_of_a_run_and_round_trips() -> None:
    card = load_cards()["efficientnet-lite0"]
    run = card.merged(revision="abc", embed_dim=1280).result_record("effnet", batch_size=8, details={"k": 1})
    assert (run.name, run.spec, run.batch_size, run.meta.revision) == ("effnet", card.spec, 8, "abc")
    assert run.meta.reported is None and run.meta.aliases == () and run.meta.notes == ""
    assert run.meta.fact_sheet() == card.fact_sheet()
    assert ModelRun.model_validate_json(run.model_dump_json()) == run
    assert ModelRun.model_validate(json.loads(run.model_dump_json())) == run


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"licence": "mit"}, "licence: Extra inputs are not permitted"),
        ({"embed_dim": "1280"}, "embed_dim: Value error, expected a whole number or 'unknown', got '1280'"),
        ({"open_weights": "maybe"}, "open_weights: Value error, expected true, false or 'unknown', got 'maybe'"),
        ({"params": True}, "params: Value error, expected a count or text such as '4.7M', got True"),
        ({"release_date": "soon"}, "release_date: Value error, expected a date"),
        ({"name": 7}, "name: Input should be a valid string"),
        ({"id": "Not An Id"}, "id: String should match pattern"),
    ],
)
def test_a_wrong_field_is_one_error_naming_it(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        ModelMeta.model_validate(fields)
    assert caught.value.error_count() == 1 and first_problem(caught.value).startswith(problem)


def test_a_shipped_card_error_names_the_file_and_field() -> None:
    data = json.loads(load_cards()["efficientnet-lite0"].model_dump_json())
    with pytest.raises(LookBenchError, match=r"^model card x\.json is invalid: field embed_dim: .*got '1280'$"):
        parse_card(json.dumps({**data, "embed_dim": "1280"}), "x.json")
    with pytest.raises(LookBenchError, match=r"^model card x\.json is invalid: a shipped card needs an id"):
        parse_card(json.dumps({**data, "id": None}), "x.json")


def test_meta_is_frozen() -> None:
    with pytest.raises(ValidationError, match="frozen"):
        ModelMeta().name = "x"  # type: ignore[misc]
