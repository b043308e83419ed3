"""The legacy benchmarks lookbench imports: what each is, where it comes from, its licence and citation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from lookbench import __version__
from lookbench.datasets.legacy.context import ImportContext, ImportOptions
from lookbench.datasets.legacy.source import Distribution
from lookbench.datasets.legacy.writer import PROVENANCE_COLUMNS, SnapshotWriter
from lookbench.errors import DatasetImportError
from lookbench.evaluation import protocols
from lookbench.evaluation.protocols import Protocol
from lookbench.snapshot.card import DatasetCard, SubsetCard

Importer = Callable[[ImportContext], dict[str, SubsetCard]]


@dataclass(frozen=True)
class LegacyDataset:
    """One benchmark: its importer and the facts its dataset card records."""

    name: str
    title: str
    protocol: Protocol
    """How `lookbench eval` scores it (its card records the name)."""
    licence: str
    licence_id: str
    citation: str
    homepage: str
    reads: str
    importer: Importer


def _inshop(ctx: ImportContext) -> dict[str, SubsetCard]:
    from lookbench.datasets.legacy.inshop import import_inshop

    return import_inshop(ctx)


def _deepfashion2(ctx: ImportContext) -> dict[str, SubsetCard]:
    from lookbench.datasets.legacy.deepfashion2 import import_deepfashion2

    return import_deepfashion2(ctx)


def _street2shop(ctx: ImportContext) -> dict[str, SubsetCard]:
    from lookbench.datasets.legacy.street2shop import import_street2shop

    return import_street2shop(ctx)


def _fashion200k(ctx: ImportContext) -> dict[str, SubsetCard]:
    from lookbench.datasets.legacy.fashion200k import import_fashion200k

    return import_fashion200k(ctx)


def _fashioniq(ctx: ImportContext) -> dict[str, SubsetCard]:
    from lookbench.datasets.legacy.fashioniq import import_fashioniq

    return import_fashioniq(ctx)


def _fashion_mnist(ctx: ImportContext) -> dict[str, SubsetCard]:
    from lookbench.datasets.legacy.fashionmnist import import_fashion_mnist

    return import_fashion_mnist(ctx)


def _fashion_mnist_validation(ctx: ImportContext) -> dict[str, SubsetCard]:
    from lookbench.datasets.legacy.fashionmnist import import_fashion_mnist_validation

    return import_fashion_mnist_validation(ctx)


DATASETS: dict[str, LegacyDataset] = {
    d.name: d
    for d in (
        LegacyDataset(
            name="inshop",
            title="DeepFashion In-shop Clothes Retrieval Benchmark",
            protocol=protocols.INSHOP,
            licence="DeepFashion agreement: non-commercial research and educational use only; the images' copyright "
            "stays with their owners (not CUHK)",
            licence_id="deepfashion-noncommercial-research",
            citation="@inproceedings{liu2016deepfashion,\n  author = {Ziwei Liu and Ping Luo and Shi Qiu and "
            "Xiaogang Wang and Xiaoou Tang},\n  title = {DeepFashion: Powering Robust Clothes Recognition and "
            "Retrieval with Rich Annotations},\n  booktitle = {CVPR},\n  year = {2016}\n}",
            homepage="https://mmlab.ie.cuhk.edu.hk/projects/DeepFashion/InShopRetrieval.html",
            reads="Eval/list_eval_partition.txt, Anno/list_bbox_inshop.txt, Anno/list_attr_cloth.txt, "
            "Anno/list_attr_items.txt, Img/img/...",
            importer=_inshop,
        ),
        LegacyDataset(
            name="deepfashion2",
            title="DeepFashion2 consumer-to-shop clothes retrieval",
            protocol=protocols.DEEPFASHION2,
            licence="DeepFashion2 terms of use: non-commercial research purposes only (password by request form); "
            "the images' copyright stays with their owners",
            licence_id="deepfashion2-noncommercial-research",
            citation="@inproceedings{ge2019deepfashion2,\n  author = {Yuying Ge and Ruimao Zhang and Lingyun Wu and "
            "Xiaogang Wang and Xiaoou Tang and Ping Luo},\n  title = {DeepFashion2: A Versatile Benchmark for "
            "Detection, Pose Estimation, Segmentation and Re-Identification of Clothing Images},\n  booktitle = "
            "{CVPR},\n  year = {2019}\n}",
            homepage="https://github.com/switchablenorms/DeepFashion2",
            reads="validation/annos/*.json + validation/image/*.jpg (scored), train/annos + train/image (train "
            "split); optionally detector boxes as COCO results JSON (--detections)",
            importer=_deepfashion2,
        ),
        LegacyDataset(
            name="street2shop",
            title="Street2Shop (Where to Buy It)",
            protocol=protocols.STREET2SHOP,
            licence="research use; the photos are the web images listed in photos.txt, copyright of their owners",
            licence_id="street2shop-research",
            citation="@inproceedings{kiapour2015where,\n  author = {M. Hadi Kiapour and Xufeng Han and "
            "Svetlana Lazebnik and Alexander C. Berg and Tamara L. Berg},\n  title = {Where to Buy It: Matching "
            "Street Clothing Photos in Online Shops},\n  booktitle = {ICCV},\n  year = {2015}\n}",
            homepage="http://www.tamaraberg.com/street2shop/",
            reads="meta/json/retrieval_<category>.json, meta/json/test_pairs_<category>.json, "
            "meta/json/train_pairs_<category>.json, images/<photo id>.<ext>",
            importer=_street2shop,
        ),
        LegacyDataset(
            name="fashion200k",
            title="Fashion200K (with TIRG's composed test queries)",
            protocol=protocols.FASHION200K,
            licence="research use (no licence file is published); the images' copyright stays with their owners",
            licence_id="fashion200k-research",
            citation="@inproceedings{han2017automatic,\n  author = {Xintong Han and Zuxuan Wu and Phoenix X. Huang and "
            "Xiao Zhang and Menglong Zhu and Yuan Li and Yang Zhao and Larry S. Davis},\n  title = {Automatic "
            "Spatially-aware Fashion Concept Discovery},\n  booktitle = {ICCV},\n  year = {2017}\n}\n"
            "@inproceedings{vo2019composing,\n  author = {Nam Vo and Lu Jiang and Chen Sun and Kevin Murphy and "
            "Li-Jia Li and Li Fei-Fei and James Hays},\n  title = {Composing Text and Image for Image Retrieval - "
            "an Empirical Odyssey},\n  booktitle = {CVPR},\n  year = {2019}\n}",
            homepage="https://github.com/xthan/fashion-200k",
            reads="labels/<category>_{train,test}_detect_all.txt, the images they name, and TIRG's "
            "test_queries.txt (github.com/google/tirg) for the composed protocol",
            importer=_fashion200k,
        ),
        LegacyDataset(
            name="fashioniq",
            title="FashionIQ (composed retrieval with relative captions)",
            protocol=protocols.FASHIONIQ,
            licence="Community Data License Agreement (CDLA); the product images' copyright stays with their owners",
            licence_id="cdla",
            citation="@inproceedings{wu2021fashioniq,\n  author = {Hui Wu and Yupeng Gao and Xiaoxiao Guo and Ziad "
            "Al-Halah and Steven Rennie and Kristen Grauman and Rogerio Feris},\n  title = {Fashion IQ: A New "
            "Dataset Towards Retrieving Images by Natural Language Feedback},\n  booktitle = {CVPR},\n  year = "
            "{2021}\n}",
            homepage="https://github.com/XiaoxiaoGuo/fashion-iq",
            reads="captions/cap.<dress|shirt|toptee>.{val,train}.json, image_splits/split.<category>.{val,train}.json, "
            "images/<asin>.<ext> (or resized_images/<category>/)",
            importer=_fashioniq,
        ),
        LegacyDataset(
            name="fashion-mnist",
            title="Fashion-MNIST (class-level retrieval, an out-of-domain check)",
            protocol=protocols.FASHION_MNIST,
            licence="MIT License (Copyright (c) 2017 Zalando SE); images from Zalando's product catalogue",
            licence_id="mit",
            citation="@online{xiao2017fashionmnist,\n  author = {Han Xiao and Kashif Rasul and Roland Vollgraf},\n  "
            "title = {Fashion-MNIST: a Novel Image Dataset for Benchmarking Machine Learning Algorithms},\n  "
            "date = {2017-08-28},\n  eprint = {1708.07747},\n  eprinttype = {arXiv}\n}",
            homepage="https://github.com/zalandoresearch/fashion-mnist",
            reads="train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte "
            "(.gz or unpacked; Debian: /usr/share/datasets/fashion-mnist from dataset-fashion-mnist)",
            importer=_fashion_mnist,
        ),
    )
}
DATASETS["fashion-mnist-validation"] = replace(
    DATASETS["fashion-mnist"],
    name="fashion-mnist-validation",
    title="Fashion-MNIST validation (training-file images only, disjoint from the fashion-mnist test protocol)",
    protocol=protocols.FASHION_MNIST_VALIDATION,
    importer=_fashion_mnist_validation,
)


def get_dataset(name: str) -> LegacyDataset:
    """A registered dataset by name; an error lists the known names."""
    try:
        return DATASETS[name]
    except KeyError:
        raise DatasetImportError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}") from None


def readme(card: DatasetCard) -> str:
    """The snapshot's README.md: a Hugging Face dataset card (configs per subset) with the human-readable facts."""
    import yaml

    configs = [
        {"config_name": subset, "data_files": [{"split": s, "path": f"{subset}/{s}.parquet"} for s in entry.splits]}
        for subset, entry in card.subsets.items()
    ]
    header = yaml.safe_dump(
        {"pretty_name": card.title, "license": "other", "license_name": card.licence, "configs": configs},
        sort_keys=False,
        allow_unicode=True,
    )
    lines = [
        "---",
        header.rstrip(),
        "---",
        "",
        f"# {card.title}",
        "",
        f"Imported by lookbench {card.importer.get('lookbench', '')} "
        f"from `{card.source_location}`; scored by the `{card.protocol}` protocol (`lookbench eval` applies it).",
        "",
    ]
    lines += ["## Licence", "", card.licence, "", "## Source", "", card.homepage, ""]
    lines += ["## Citation", "", "```bibtex", card.citation, "```", ""]
    lines += [
        "## Subsets",
        "",
        "| subset | title | " + " | ".join(("query", "gallery", "train")) + " |",
        "|---|---|---|---|---|",
    ]
    for subset, entry in card.subsets.items():
        counts = [str(entry.splits.get(s, 0)) for s in ("query", "gallery", "train")]
        lines.append(f"| {subset} | {entry.title} | " + " | ".join(counts) + " |")
    lines += [
        "",
        f"Provenance columns on every row: {', '.join(f'`{c}`' for c in PROVENANCE_COLUMNS)}.",
        "",
    ]
    if card.notes:
        lines += ["## Notes", "", *[f"- {note}" for note in card.notes], ""]
    lines += ["## Files read", "", "| file | bytes | sha256 |", "|---|---|---|"]
    lines += [f"| {f.path} | {f.bytes} | {f.sha256} |" for f in card.source_files]
    return "\n".join(lines) + "\n"


def import_dataset(
    name: str, src: Path, out: Path, options: ImportOptions, snapshot_name: str | None = None, overwrite: bool = False
) -> Path:
    """Import one dataset from its distribution folder into `out/<snapshot_name or name>`; return that folder."""
    dataset = get_dataset(name)
    dist = Distribution(src)
    target_name = snapshot_name or name
    with SnapshotWriter(out, target_name, dataset.name, dataset.licence_id, overwrite) as writer:
        ctx = ImportContext(dist, writer, options)
        subsets = dataset.importer(ctx)
        shown = {
            "train": str(options.train).lower(),
            "skip_missing": str(options.skip_missing).lower(),
            **({"detections": str(options.detections)} if options.detections else {}),
            **({"tirg_queries": str(options.tirg_queries)} if options.tirg_queries else {}),
            **({"unpinned": "true"} if options.unpinned else {}),
        }
        card = DatasetCard(
            name=target_name,
            title=dataset.title,
            protocol=dataset.protocol.name,
            licence=dataset.licence,
            citation=dataset.citation,
            homepage=dataset.homepage,
            source_location=str(src),
            source_files=dist.source_files(),
            subsets=subsets,
            options=shown,
            notes=[*ctx.notes, *ctx.skipped_notes()],
            importer={"lookbench": __version__, "dataset": dataset.name},
        )
        return writer.finish(card, readme)
