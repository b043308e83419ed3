"""Hostile training inputs: undecodable images, a second run in the same folder, augmentation determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from trainkit import HERE, eval_snapshot, row, tiny_config, training_snapshot

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

from lookbench.errors import TrainError  # noqa: E402
from lookbench.train.config import Augment, parse_config  # noqa: E402
from lookbench.train.loop import Trainer, run_lock  # noqa: E402


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(HERE))
    bad = [row("broken", 40, 0, data=b"\xff\xd8\xff\xe0 not really a jpeg"), row("broken", 40, 1)]
    return training_snapshot(tmp_path / "t", items=6, views=2, extra=bad), eval_snapshot(tmp_path / "e")


@pytest.mark.parametrize("guard", [True, False])
@pytest.mark.parametrize("workers", [0, 1])
def test_an_undecodable_training_image_is_one_clear_error(
    broken: tuple[Path, Path], tmp_path: Path, guard: bool, workers: int
) -> None:
    train, evaluation = broken
    data = {
        "train": {"snapshot": str(train)},
        "validation": None,
        "guard": {"enabled": guard, "against": [str(evaluation)]},
        "workers": workers,
    }
    cfg = parse_config(tiny_config(train, evaluation, data=data, schedule={"steps": 8}), "test")
    with pytest.raises(TrainError) as error:
        Trainer(cfg, tmp_path / "run", progress=False, say=lambda _m: None).run()
    message = str(error.value)
    assert "v20260301/real_studio_flat/gallery#12" in message and "does not decode" in message
    assert "Traceback" not in message and "\n" not in message


def test_a_second_run_in_the_same_folder_is_refused(tmp_path: Path) -> None:
    with (
        run_lock(tmp_path / "run"),
        pytest.raises(TrainError, match="in use by another training run"),
        run_lock(tmp_path / "run"),
    ):
        pass
    with run_lock(tmp_path / "run"):  # released when the first holder is done
        pass


@pytest.mark.parametrize("backend", ["basic", "timm"])
def test_augmentations_are_a_function_of_the_seed(backend: str) -> None:
    if backend == "timm":
        pytest.importorskip("timm")
        pytest.importorskip("torchvision")
    from PIL import Image

    from lookbench.models.preprocess import Preprocess
    from lookbench.train.augment import train_transform

    cfg = Augment(backend=backend, scale=(0.3, 1.0), color_jitter=0.3)  # type: ignore[arg-type]
    transform = train_transform(cfg, 24, Preprocess(crop=24, mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25)))
    image = Image.fromarray(np.random.default_rng(0).integers(0, 256, (50, 40, 3), dtype=np.uint8))
    state = torch.get_rng_state()
    a, b, c = transform(image, 11), transform(image, 11), transform(image, 12)
    assert torch.equal(torch.get_rng_state(), state)  # the global RNG a resume restores is left alone
    assert a.shape == (3, 24, 24) and a.dtype == torch.float32
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_basic_backend_refuses_timm_only_options() -> None:
    from lookbench.models.preprocess import Preprocess
    from lookbench.train.augment import train_transform

    with pytest.raises(TrainError, match="need timm"):
        train_transform(Augment(backend="basic", auto_augment="rand-m9"), 24, Preprocess(crop=24))


def test_imprinted_centres_are_the_normalised_class_means(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch.nn.functional as F

    from lookbench._util.images import decode_image
    from lookbench.models.backbones import EmbeddingHead, EmbeddingModel
    from lookbench.models.registry import create_backbone
    from lookbench.train.config import IdentityLoss, TrainData
    from lookbench.train.data import load_training_set
    from lookbench.train.imprint import imprint_centres
    from lookbench.train.partial_fc import identity_loss

    monkeypatch.syspath_prepend(str(HERE))
    training = load_training_set([TrainData(snapshot=str(training_snapshot(tmp_path, 5, 3)))], 0, tmp_path / "c")
    torch.manual_seed(0)
    backbone = create_backbone("python:tinynet:make")
    model = EmbeddingModel(backbone, EmbeddingHead(backbone.feature_dim, 6)).eval()
    for rank, subcenters in [(0, 1), (1, 2)]:
        loss = IdentityLoss(kind="subcenter_arcface" if subcenters > 1 else "arcface", subcenters=subcenters)
        pfc = identity_loss(loss, training.num_classes, 6, rank=rank, world=2)
        before = pfc.weight.detach().clone()
        assert (
            imprint_centres(pfc, model, training, backbone.preprocess, torch.device("cpu"), 4, 0) == 3 * pfc.num_local
        )
        for local in range(pfc.num_local):
            rows = np.flatnonzero(training.classes == pfc.class_start + local)
            images = torch.from_numpy(backbone.preprocess.batch([decode_image(training.images[int(r)]) for r in rows]))
            with torch.no_grad():
                mean = F.normalize(model(images).double().mean(0), dim=0).float()
            got = pfc.weight.detach().view(pfc.num_local, subcenters, -1)[local]
            expected = mean + before.view(pfc.num_local, subcenters, -1)[local] if subcenters > 1 else mean[None]
            assert torch.allclose(got, expected, atol=1e-5)
