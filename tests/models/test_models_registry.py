"""Model specs, names, cards and the `lookbench models` command."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import time
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from lookbench._util.dates import lenient_date
from lookbench.cli.main import app
from lookbench.errors import EmbeddingError, LookBenchError
from lookbench.models.card import find_card, load_cards, parse_card
from lookbench.models.hub import ensure_hub_model
from lookbench.models.meta import ModelMeta
from lookbench.models.registry import DEFAULT_MODEL, KINDS, expand_spec, resolve_model

LEADERBOARD = Path(__file__).resolve().parents[3] / "shared" / "reference" / "lookbench_leaderboard_v2601.json"
BOARD_MODELS = [
    "GR-Pro", "GR-Lite", "Marqo-fashionCLIP", "Marqo-fashionSigLIP", "SigLIP2-B/16", "SigLIP2-L/16", "DINOv2-ViT-L",
    "DINOv2-ViT-G", "DINOv3-ViT-L", "DINOv3-ViT-7B", "DINOv3-ConvNeXt-L", "CLIP-B/32", "CLIP-L/14", "PP-ShiTuV2",
    "InternViT-6B", "Tianmu-MERE",
]  # fmt: skip


def test_every_leaderboard_model_has_a_card() -> None:
    names = {c.reported.leaderboard_name for c in load_cards().values() if c.reported}
    assert set(BOARD_MODELS) <= names


@pytest.mark.skipif(not LEADERBOARD.is_file(), reason="shared reference data not present")
def test_reported_numbers_match_the_published_leaderboard() -> None:
    board = json.loads(LEADERBOARD.read_text())
    tabs = {"Real Studio": "real_studio_flat", "AI-Gen StreetLook": "aigen_streetlook"}
    for card in load_cards().values():
        if card.reported is None:
            continue
        for tab, subset in tabs.items():
            assert card.reported.metrics[subset] == board[tab][card.reported.leaderboard_name]
        assert "reported by the authors" in card.reported.source


def test_card_dates_parse_and_reach_the_contamination_facts() -> None:
    for card in load_cards().values():
        for value in (card.release_date, card.training_cutoff):
            assert value == "unknown" or lenient_date(value) is not None, (card.id, value)
        assert (card.release_day is None) == (card.release_date == "unknown"), card.id
        assert card.fact_sheet() is not None, card.id
    assert load_cards()["gr-lite"].release_day == dt.date(2026, 1, 31)


def test_cards_reject_unknown_fields() -> None:
    data = load_cards()["efficientnet-lite0"].model_dump()
    with pytest.raises(ValidationError):
        ModelMeta.model_validate({**data, "accuracy": 99})
    with pytest.raises(ValidationError):
        ModelMeta.model_validate({**data, "open_weights": "maybe"})


def test_cards_reject_repeated_fields() -> None:
    text = json.dumps(load_cards()["efficientnet-lite0"].model_dump(), indent=1)
    assert parse_card(text, "x.json").id == "efficientnet-lite0"
    repeated = text.replace('"notes":', '"notes": "first",\n "notes":', 1)
    with pytest.raises(LookBenchError, match=r"x\.json is invalid: .*'notes' appears twice"):
        parse_card(repeated, "x.json")


def test_names_expand_to_specs() -> None:
    assert expand_spec(DEFAULT_MODEL) == "builtin:efficientnet-lite0"
    assert expand_spec("Marqo-FashionSigLIP") == "open_clip:hf-hub:Marqo/marqo-fashionSigLIP"
    assert expand_spec("onnx:/x.onnx") == "onnx:/x.onnx"
    assert find_card("default") is not None and find_card("default").id == DEFAULT_MODEL  # type: ignore[union-attr]
    for card in load_cards().values():
        if card.spec:
            assert card.spec.split(":")[0] in KINDS


def test_unrunnable_and_unknown_specs_explain() -> None:
    with pytest.raises(LookBenchError, match="GR-Pro has no runnable spec"):
        resolve_model("gr-pro")
    with pytest.raises(LookBenchError, match="unknown model kind 'tensorflow'"):
        resolve_model("tensorflow:thing")
    with pytest.raises(LookBenchError, match="expected KIND:ARGUMENT"):
        resolve_model("not-a-model")
    with pytest.raises(LookBenchError, match="unknown builtin"):
        resolve_model("builtin:resnet9000")


def test_hub_model_fails_fast_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    started = time.monotonic()
    specs = {
        "hf:facebook/dinov2-large": ("transformers", "hf"),
        "open_clip:hf-hub:Marqo/marqo-fashionSigLIP": ("open_clip", "openclip"),
        "marqo-fashionclip": ("open_clip", "openclip"),
        "gr-lite": ("json", ""),
    }
    for spec, (library, extra) in specs.items():
        # the library is asked for first (a bare install is told what to install), then the hub is checked
        found = importlib.util.find_spec(library) is not None
        wanted = "not in the local Hugging Face cache" if found else re.escape(f"pip install 'lookbench[{extra}]'")
        with pytest.raises(EmbeddingError, match=wanted):
            resolve_model(spec)
    assert time.monotonic() - started < 2
    (tmp_path / "models--facebook--dinov2-large" / "snapshots" / "abc").mkdir(parents=True)
    ensure_hub_model("facebook/dinov2-large", "hf:facebook/dinov2-large")


def test_gr_models_run_code_only_when_trusted(tmp_path: Path) -> None:
    pickled = tmp_path / "gr_lite.pt"
    pickled.write_bytes(b"not opened before trust is given")
    with pytest.raises(EmbeddingError, match="is loaded by unpickling a whole torch module.*add trust_remote_code=1"):
        resolve_model(f"gr:{pickled}")
    with pytest.raises(EmbeddingError, match=r"srpone/gr-lite \(gr_lite.pt\) is loaded by unpickling"):
        resolve_model("gr:srpone/gr-lite?feature_dim=256")
    (tmp_path / "config.json").write_text(json.dumps({"auto_map": {"AutoModel": "modeling_gr.GR"}}))
    with pytest.raises(EmbeddingError, match="is transformers remote code: loading it runs the Python files"):
        resolve_model(f"gr:{tmp_path}?trust_remote_code=0")
    with pytest.raises(LookBenchError, match="feature_dim='0': expected a positive integer"):
        resolve_model(f"gr:{pickled}?feature_dim=0&trust_remote_code=1")
    with pytest.raises(EmbeddingError, match="does not exist"):
        resolve_model(f"gr:{tmp_path / 'missing.pt'}?trust_remote_code=1")


def test_hub_unreachable_fails_fast(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match="hub is unreachable"):
        ensure_hub_model("google/siglip2-base-patch16-224", "hf:google/siglip2-base-patch16-224")
    assert time.monotonic() - started < 4


def test_models_command_lists_cards() -> None:
    result = CliRunner().invoke(app, ["models"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "efficientnet-lite0" in result.output and "gr-pro" in result.output and "69.14" in result.output
    one = CliRunner().invoke(app, ["models", "clip-b32", "--json"])
    assert one.exit_code == 0 and json.loads(one.output)["spec"] == "open_clip:ViT-B-32/openai"
    listed = json.loads(CliRunner().invoke(app, ["models", "--json"]).output)
    default = next(c for c in listed if c["id"] == DEFAULT_MODEL)
    assert default["runnable_here"] == "yes"
