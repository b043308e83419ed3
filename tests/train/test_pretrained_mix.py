"""`export.pretrained_mix`: the fine-tuned model mixed with its pretrained backbone when `trained:DIR` loads it,
checked against the pretrained factory and the weights file themselves; hostile shares are one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from trainkit import HERE, tiny_config, training_snapshot
from typer.testing import CliRunner

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

from safetensors.torch import load_file  # noqa: E402
from tinynet import make_seeded  # noqa: E402

from lookbench.cli.main import app  # noqa: E402
from lookbench.errors import LookBenchError  # noqa: E402
from lookbench.models.embed_options import EmbedOptions  # noqa: E402
from lookbench.models.registry import resolve_model  # noqa: E402
from lookbench.train.config import parse_config  # noqa: E402
from lookbench.train.loop import Trainer  # noqa: E402

BACKBONE = "python:tinynet:make_seeded"


def config(snap: Path, **export: object) -> dict[str, object]:
    data = {"train": {"snapshot": str(snap)}, "validation": None, "guard": {"enabled": False}, "workers": 0}
    return tiny_config(
        snap,
        snap,
        data=data,
        model={"backbone": BACKBONE, "embedding_dim": 8},
        runtime={"threads": 1},
        schedule={"steps": 3, "warmup_steps": 0},
        optim={"lr": 0.05, "head_lr_multiplier": 2, "layer_decay": 1.0},
        export=export,
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mixed")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOOKBENCH_CACHE", str(root / "cache"))
        patch.syspath_prepend(str(HERE))
        snap = training_snapshot(root / "train", items=4, views=2)
        cfg = config(snap, pretrained_mix={"space": "outputs", "trained_share": 0.6})
        Trainer(parse_config(cfg, "test"), root / "model", progress=False, say=lambda _m: None).run()
    return root / "model"


def encoder_module(folder: Path, options: str = "") -> torch.nn.Module:
    provider = resolve_model(f"trained:{folder}{options}", EmbedOptions())
    return provider.encoder.forward  # type: ignore[attr-defined,no-any-return]


def backbone_weights(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k.removeprefix("backbone.module."): v for k, v in module.state_dict().items() if k.startswith("backbone.")}


def test_the_card_records_the_mix(exported: Path) -> None:
    info = json.loads((exported / "model.json").read_text())
    assert info["pretrained_mix"] == {"space": "outputs", "trained_share": 0.6, "backbone": BACKBONE}
    assert info["training"]["recipe"]["export"]["pretrained_mix"] == {"space": "outputs", "trained_share": 0.6}
    readme = (exported / "README.md").read_text()
    assert (
        f"Loaded mixed with the pretrained `{BACKBONE}` (robust fine-tuning): outputs space, fine-tuned share 0.6"
        in readme
    )


def test_weight_space_endpoints_and_middle_match_the_files(exported: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    pretrained = make_seeded().state_dict()
    trained = {k.removeprefix("backbone.module."): v for k, v in load_file(str(exported / "model.safetensors")).items()
               if k.startswith("backbone.")}  # fmt: skip
    assert any(not torch.equal(trained[k], pretrained[k]) for k in pretrained)  # training moved the backbone
    for share, expected in (("0", pretrained), ("1", trained)):
        got = backbone_weights(encoder_module(exported, f"?trained_share={share}&mix=weights"))
        assert got.keys() == expected.keys()
        assert all(torch.equal(got[k], expected[k]) for k in expected), share
    got = backbone_weights(encoder_module(exported, "?trained_share=0.25&mix=weights"))
    for name, value in got.items():
        torch.testing.assert_close(value, 0.25 * trained[name] + 0.75 * pretrained[name])
    head = encoder_module(exported, "?trained_share=0&mix=weights").state_dict()["head.proj.weight"]
    assert torch.equal(head, load_file(str(exported / "model.safetensors"))["head.proj.weight"])


def test_output_space_cosines_are_the_weighted_sum(exported: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    images = torch.randn(5, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        mixed = encoder_module(exported)(images)  # the recorded share, 0.6
        tuned = encoder_module(exported, "?trained_share=1")(images)
        frozen = torch.nn.functional.normalize(make_seeded().eval()(images), dim=-1)
    assert mixed.shape == (5, 8 + 16)
    np.testing.assert_allclose(mixed.norm(dim=-1).numpy(), 1.0, atol=1e-5)
    expected = 0.6 * tuned @ tuned.T + 0.4 * frozen @ frozen.T
    np.testing.assert_allclose((mixed @ mixed.T).numpy(), expected.numpy(), atol=1e-5)
    np.testing.assert_allclose(tuned.numpy(), mixed[:, :8].numpy() / np.sqrt(0.6), atol=1e-5)
    with torch.no_grad():
        alone = encoder_module(exported, "?trained_share=0")(images)
    np.testing.assert_allclose(alone.numpy(), frozen.numpy(), atol=1e-6)


def test_a_mix_is_never_served_the_fine_tuned_models_cached_vectors(
    exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trainkit import eval_snapshot

    from lookbench.snapshot import open_snapshot

    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))  # both share one cache, as in real use
    snap = open_snapshot(eval_snapshot(tmp_path / "eval"))
    alone = resolve_model(f"trained:{exported}?trained_share=1", EmbedOptions())
    mixed = resolve_model(f"trained:{exported}", EmbedOptions())
    first = np.asarray(alone.embed_split(snap, "real_studio_flat", "query"))
    second = np.asarray(mixed.embed_split(snap, "real_studio_flat", "query"))
    assert first.shape == (6, 8) and second.shape == (6, 8 + 16)
    assert alone.describe().meta.model_id != mixed.describe().meta.model_id
    np.testing.assert_allclose(second[:, :8] / np.sqrt(0.6), first / np.linalg.norm(first, axis=1, keepdims=True),
                               atol=1e-5)  # fmt: skip


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("?trained_share=1.5", "trained_share: Input should be less than or equal to 1"),
        ("?trained_share=-0.1", "trained_share: Input should be greater than or equal to 0"),
        ("?trained_share=abc", "trained_share must be a number in [0, 1], got 'abc'"),
        ("?trained_share=nan", "trained_share: Input should be"),
        ("?trained_share=0.5&mix=logits", "space: Input should be 'outputs' or 'weights'"),
        ("?mix=weights", "mix= needs trained_share= beside it"),
    ],
)
def test_hostile_spec_options_are_one_line(exported: Path, options: str, message: str) -> None:
    with pytest.raises(LookBenchError) as error:
        resolve_model(f"trained:{exported}{options}", EmbedOptions())
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("mix", "message"),
    [
        ({"trained_share": 1.5}, "export.pretrained_mix.trained_share: Input should be less than or equal to 1"),
        ({"trained_share": -1}, "export.pretrained_mix.trained_share: Input should be greater than or equal to 0"),
        ({"trained_share": "0.5"}, "export.pretrained_mix.trained_share: Input should be a valid number"),
        ({"trained_share": True}, "export.pretrained_mix.trained_share: Input should be a valid number"),
        ({"space": "logits", "trained_share": 0.5}, "export.pretrained_mix.space: Input should be 'outputs' or"),
        ({"share": 0.5}, "export.pretrained_mix.trained_share: Field required"),
        ({"trained_share": 0.5, "alpha": 1}, "export.pretrained_mix.alpha: unknown key"),
    ],
)
def test_hostile_config_values_exit_2_with_one_line(tmp_path: Path, mix: dict[str, object], message: str) -> None:
    snap = training_snapshot(tmp_path / "train", items=4, views=2)
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(config(snap, pretrained_mix=mix)), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(path), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert str(path) in result.output
    assert not (tmp_path / "run" / "model.json").exists()
