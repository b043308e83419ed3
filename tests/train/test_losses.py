"""Margin logits against hand computation; PartialFC against the full softmax; the label losses."""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402

from lookbench.train.config import IdentityLoss  # noqa: E402
from lookbench.train.losses import MarginLogits, attribute_loss, category_loss, sharded_cross_entropy  # noqa: E402
from lookbench.train.partial_fc import PartialFC, identity_loss, init_centres, shard_range  # noqa: E402

COS = [[0.8, 0.1, -0.3], [0.2, -0.95, 0.5], [0.0, 0.4, 0.3]]
LABELS = [0, 1, -1]


def by_hand(kind: str, margin: float, scale: float) -> list[list[float]]:
    out = []
    for row, label in zip(COS, LABELS, strict=True):
        values = []
        for col, c in enumerate(row):
            if col != label:
                values.append(scale * c)
            elif kind == "cosface":
                values.append(scale * (c - margin))
            elif math.acos(c) + margin <= math.pi:
                values.append(scale * math.cos(math.acos(c) + margin))
            else:  # past pi: the monotonic continuation cos(theta) - m * sin(m)
                values.append(scale * (c - math.sin(math.pi - margin) * margin))
        out.append(values)
    return out


@pytest.mark.parametrize("kind", ["arcface", "cosface", "softmax"])
def test_margin_logits_match_hand_computation(kind: str) -> None:
    margin, scale = 0.5, 30.0
    got = MarginLogits(kind, margin, scale)(torch.tensor(COS, dtype=torch.float64), torch.tensor(LABELS))  # type: ignore[arg-type]
    expected = by_hand(kind, 0.0 if kind == "softmax" else margin, scale)
    assert torch.allclose(got, torch.tensor(expected, dtype=torch.float64), atol=1e-10)
    if kind == "arcface":  # row 1's target (cos -0.95, theta + m > pi) takes the continuation branch
        assert math.acos(-0.95) + margin > math.pi


def test_arcface_gradient_matches_the_formula() -> None:
    cos = torch.tensor([[0.6, 0.2]], dtype=torch.float64, requires_grad=True)
    logits = MarginLogits("arcface", 0.3, 10.0)(cos, torch.tensor([0]))
    logits[0, 0].backward()
    theta = math.acos(0.6)
    # d/dc [s cos(acos(c) + m)] = s sin(theta + m) / sin(theta)
    assert cos.grad is not None
    assert float(cos.grad[0, 0]) == pytest.approx(10.0 * math.sin(theta + 0.3) / math.sin(theta), rel=1e-9)


def full_softmax(embeddings: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor, loss: IdentityLoss):
    cos = F.linear(F.normalize(embeddings), F.normalize(weight)).clamp(-1, 1)
    if loss.kind == "subcenter_arcface":
        cos = cos.view(len(embeddings), -1, loss.subcenters).max(dim=2).values
    kind = "arcface" if loss.kind == "subcenter_arcface" else loss.kind
    return F.cross_entropy(MarginLogits(kind, loss.margin, loss.scale)(cos, labels), labels)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["arcface", "cosface", "subcenter_arcface", "softmax"])
def test_partial_fc_at_rate_one_equals_full_softmax_loss_and_gradients(kind: str) -> None:
    torch.manual_seed(0)
    loss = IdentityLoss(kind=kind, margin=0.3, scale=16.0, subcenters=3, sample_rate=1.0)  # type: ignore[arg-type]
    pfc = identity_loss(loss, num_classes=11, dim=6, seed=4).double()
    embeddings = torch.randn(9, 6, dtype=torch.float64, requires_grad=True)
    labels = torch.tensor([0, 3, 3, 10, 5, 7, 7, 1, 2])
    got = pfc(embeddings, labels)
    got.backward()
    weight = pfc.weight.detach().clone().requires_grad_(True)
    reference_embeddings = embeddings.detach().clone().requires_grad_(True)
    expected = full_softmax(reference_embeddings, weight, labels, loss)
    expected.backward()
    assert float(got.detach()) == pytest.approx(float(expected.detach()), rel=1e-9)
    assert torch.allclose(embeddings.grad, reference_embeddings.grad, rtol=1e-9, atol=1e-12)  # type: ignore[arg-type]
    assert torch.allclose(pfc.weight.grad, weight.grad, rtol=1e-9, atol=1e-12)  # type: ignore[arg-type]


def test_partial_fc_applies_the_margin_loss_it_is_given() -> None:
    torch.manual_seed(0)
    seen: list[torch.Tensor] = []

    def doubled_cosines(cos: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        seen.append(labels)
        return cos * 2.0

    pfc = PartialFC(doubled_cosines, num_classes=7, dim=4, seed=3).double()
    embeddings = torch.randn(5, 4, dtype=torch.float64)
    labels = torch.tensor([0, 6, 2, 2, 4])
    got = pfc(embeddings, labels)
    cos = F.linear(F.normalize(embeddings), F.normalize(pfc.weight.detach()))
    assert float(got.detach()) == pytest.approx(float(F.cross_entropy(cos * 2.0, labels)), rel=1e-9)
    assert len(seen) == 1 and torch.equal(seen[0], labels)


def test_partial_fc_below_rate_one_keeps_every_positive() -> None:
    loss = IdentityLoss(kind="arcface", sample_rate=0.1)
    pfc = identity_loss(loss, num_classes=200, dim=4, seed=1)
    assert pfc.num_sample == 20
    for trial in range(20):
        labels = torch.randint(0, 200, (12,), generator=torch.Generator().manual_seed(trial))
        index = pfc.sample(labels)
        assert set(labels.tolist()) <= set(index.tolist())
        assert len(index) == 20 and torch.equal(index, index.sort().values)
    many = torch.arange(0, 200, 5)  # 40 distinct positives: more than the sample size, all kept
    assert set(pfc.sample(many).tolist()) == set(many.tolist())


def test_partial_fc_below_rate_one_is_the_softmax_over_the_sampled_centres() -> None:
    torch.manual_seed(0)
    loss = IdentityLoss(kind="arcface", margin=0.2, scale=8.0, sample_rate=0.25)
    pfc = identity_loss(loss, num_classes=40, dim=5, seed=2).double()
    embeddings = torch.randn(6, 5, dtype=torch.float64)
    labels = torch.tensor([1, 1, 17, 30, 39, 8])
    state = pfc.generator.get_state()
    got = pfc(embeddings, labels)
    pfc.generator.set_state(state)
    index = pfc.sample(labels)
    remapped = torch.searchsorted(index, labels)
    expected = full_softmax(embeddings, pfc.weight.detach()[index], remapped, loss)
    assert float(got.detach()) == pytest.approx(float(expected), rel=1e-9)


def test_shards_cover_every_class_once_and_init_does_not_depend_on_sharding() -> None:
    for classes, world in [(10, 3), (7, 7), (2050, 4)]:
        ranges = [shard_range(classes, r, world) for r in range(world)]
        covered = [c for start, n in ranges for c in range(start, start + n)]
        assert covered == list(range(classes))
    full = init_centres(0, 2050, 2, 3, seed=5)
    parts = [init_centres(*shard_range(2050, r, 4), 2, 3, seed=5) for r in range(4)]
    assert torch.equal(torch.cat(parts), full)


def test_sharded_cross_entropy_is_plain_cross_entropy_in_one_process() -> None:
    logits = torch.randn(5, 7, dtype=torch.float64, requires_grad=True)
    labels = torch.tensor([0, 6, 3, 3, 1])
    got = sharded_cross_entropy(logits, labels)
    got.backward()
    reference = logits.detach().clone().requires_grad_(True)
    F.cross_entropy(reference, labels).backward()
    assert float(got.detach()) == pytest.approx(float(F.cross_entropy(reference, labels).detach()), rel=1e-9)
    assert torch.allclose(logits.grad, reference.grad, atol=1e-12)  # type: ignore[arg-type]


def test_label_losses_ignore_missing_labels() -> None:
    logits = torch.randn(4, 3)
    targets = torch.tensor([2, -1, 0, -1])
    assert float(category_loss(logits, targets)) == pytest.approx(
        float(F.cross_entropy(logits[[0, 2]], targets[[0, 2]]))
    )
    assert float(category_loss(logits, torch.full((4,), -1))) == 0.0
    single = [torch.randn(4, 3), torch.randn(4, 2)]
    single_targets = torch.tensor([[1, -1], [-1, -1], [0, -1], [2, -1]])
    multi = [torch.randn(4, 5)]
    multi_targets = [torch.tensor([[1, 0, 0, 1, 0], [0] * 5, [0, 0, 1, 0, 0], [0] * 5], dtype=torch.float32)]
    mask = torch.tensor([[True], [False], [True], [False]])
    got = attribute_loss(single, single_targets, multi, multi_targets, mask)
    expected = (
        F.cross_entropy(single[0][[0, 2, 3]], single_targets[[0, 2, 3], 0])
        + F.binary_cross_entropy_with_logits(multi[0][[0, 2]], multi_targets[0][[0, 2]])
    ) / 2  # the second single group has no label in the batch: left out of the mean
    assert float(got) == pytest.approx(float(expected), rel=1e-6)


def test_sgd_moves_rarely_positive_centres_in_proportion_to_their_gradient() -> None:
    from lookbench.train.config import Optim
    from lookbench.train.optim import centre_optimizer

    moved = {}
    for optimizer in ("sgd", "adamw"):
        weight = torch.nn.Parameter(torch.zeros(2, 4))
        opt = centre_optimizer(weight, IdentityLoss(optimizer=optimizer, lr=0.01, weight_decay=0), Optim())
        weight.grad = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1e-6, 1e-6, 1e-6, 1e-6]])  # a positive row, a negative one
        opt.step()
        moved[optimizer] = weight.detach().abs().sum(dim=1)
    assert moved["sgd"][1] < 1e-5 * moved["sgd"][0]  # the barely-touched centre barely moves
    # AdamW: a full step either way
    assert float(moved["adamw"][1]) == pytest.approx(float(moved["adamw"][0]), rel=0.02)
