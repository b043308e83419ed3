"""Each protocol's metrics against hand computation, through lookbench's own evaluation."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from legacykit import MeanColour, deepfashion2, df2_detections, fashion200k, inshop, street2shop

from conftest import make_row, write_snapshot
from lookbench.datasets.legacy.context import ImportOptions
from lookbench.datasets.legacy.registry import import_dataset
from lookbench.evaluation.protocols import PROTOCOLS, average_scope, protocol_columns
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.metrics.aggregate import AVERAGE
from lookbench.snapshot import open_snapshot


def run(target: Path):
    snap = open_snapshot(target)
    return evaluate(snap, MeanColour(), EvalSettings(ks=None, resamples=200))  # the protocol's cut-offs


def value(result, scope: str, metric: str) -> float:
    return result.result.metrics[scope][metric].value


def test_inshop_recall_at_k(tmp_path: Path) -> None:
    out = run(import_dataset("inshop", inshop(tmp_path / "s"), tmp_path / "o", ImportOptions(train=False)))
    assert out.result.config.protocol == "inshop" and out.result.config.ks == [1, 10, 20, 30, 40, 50]
    # A and B find their own item first; C's pink query finds A's red image first, its own blue one later
    assert value(out, "inshop", "recall@1") == pytest.approx(2 / 3)
    assert value(out, "inshop", "recall@10") == 1.0
    assert value(out, "inshop", "recall@1") == value(out, "inshop", "item_recall@1")  # same item id rule
    assert value(out, "inshop", "coarse_recall@1") == 1.0  # LookBench metrics beside: all three are Dresses/Dresses
    assert out.per_query["recall@1"].to_pylist() == [1.0, 1.0, 0.0]


def test_deepfashion2_ground_truth_and_detector_misses(tmp_path: Path) -> None:
    src = deepfashion2(tmp_path / "s")
    truth = run(import_dataset("deepfashion2", src, tmp_path / "o", ImportOptions(train=False)))
    assert truth.result.config.ks == [1, 5, 10, 15, 20]
    # pair 2's green consumer trousers meet pair 1's green style-2 trousers first, their own blue ones later
    assert value(truth, "deepfashion2", "recall@1") == 0.5
    assert value(truth, "deepfashion2", "recall@5") == 1.0
    options = ImportOptions(train=False, detections=df2_detections(tmp_path / "d.json"))
    detected = run(import_dataset("deepfashion2", src, tmp_path / "o", options, snapshot_name="df2-det"))
    # consumer photo 3's only detection has the wrong category: that query fails at every K
    for k in (1, 5, 20):
        assert value(detected, "deepfashion2", f"recall@{k}") == 0.5
    assert value(detected, "deepfashion2", "item_recall@5") == 1.0  # what a ground-truth crop would have scored


def test_street2shop_per_category(tmp_path: Path) -> None:
    out = run(import_dataset("street2shop", street2shop(tmp_path / "s"), tmp_path / "o", ImportOptions()))
    assert value(out, "street2shop_dresses", "recall@1") == 0.5
    assert value(out, "street2shop_dresses", "recall@5") == 1.0
    assert value(out, "street2shop_skirts", "recall@1") == 1.0
    assert value(out, "overall", "recall@1") == pytest.approx(2 / 3)


def test_fashion200k_product_protocol(tmp_path: Path) -> None:
    target = import_dataset("fashion200k", fashion200k(tmp_path / "s", queries=False), tmp_path / "o", ImportOptions())
    out = run(target)
    # 200_0 is blue; its product's other image is pink, ranked after red 100_1 and green 300_0
    assert value(out, "fashion200k", "recall@1") == 0.5
    assert value(out, "fashion200k", "recall@10") == 1.0


def _table(subsets: list[str], recall: list[float], item: list[list[bool]]) -> pa.Table:
    n = len(subsets)
    return pa.table(
        {
            "subset": subsets,
            "query_row": list(range(n)),
            "cluster": list(range(n)),
            "item": item,
            "recall@1": pa.array(recall, pa.float64()),
            "recall@10": pa.array(recall, pa.float64()),
        }
    )


def test_fashioniq_average_is_unweighted() -> None:
    subsets = ["composed_dress"] * 2 + ["composed_shirt"] * 2 + ["composed_toptee"] * 4
    table = _table(subsets, [1, 0, 1, 1, 0, 0, 0, 1], [[False]] * 8)
    average = average_scope(PROTOCOLS["fashioniq"], table, (10,), resamples=300, seed=0, confidence=0.95)
    assert average["recall@10"].value == pytest.approx((0.5 + 1.0 + 0.25) / 3)  # the query-weighted mean is 0.5
    assert average["recall@10"].n == 8
    assert 0.0 <= average["recall@10"].ci_low <= average["recall@10"].value <= average["recall@10"].ci_high <= 1.0
    assert average_scope(PROTOCOLS["fashioniq"], table.slice(0, 4), (10,), 10, 0, 0.95) == {}  # toptee missing
    assert AVERAGE == "average"


def test_protocol_columns_keep_composed_values() -> None:
    # the composed row's own recall (its explicit target was not retrieved) stays; the image row gets the protocol's
    table = _table(["composed_fashion200k", "fashion200k"], [0.0, float("nan")], [[True, False], [False, True]])
    composed = ("composed_fashion200k",)
    filled = protocol_columns(PROTOCOLS["fashion200k"], None, table, (1, 10), composed)  # type: ignore[arg-type]
    assert filled["recall@10"].to_pylist() == [0.0, 1.0]
    assert filled["recall@1"].to_pylist() == [0.0, 0.0]
    plain = protocol_columns(PROTOCOLS["fashion200k"], None, table.slice(1).drop_columns(["recall@1", "recall@10"]),
                             (1, 10), composed)  # type: ignore[arg-type]  # fmt: skip
    assert plain["recall@1"].to_pylist() == [0.0] and plain["recall@10"].to_pylist() == [1.0]


def test_tables_show_labelled_reference_rows(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from lookbench.cli.main import app
    from lookbench.results.io import save_run
    from lookbench.results.tables import build_tables, to_csv, to_markdown

    out = run(import_dataset("inshop", inshop(tmp_path / "s"), tmp_path / "o", ImportOptions(train=False)))
    saved, _ = save_run(out.result, out.per_query, tmp_path / "r" / "mean-colour__inshop__main.json")
    table = build_tables([saved], ("recall@1",))[0]
    assert table.scopes == ["inshop", "overall"]
    labels = [label for label, _ in table.references]
    assert any("Unicom" in label and label.startswith("reference: ") for label in labels)
    assert dict(table.references)[labels[0]]["inshop"] == pytest.approx(0.967)
    assert "*reference: Unicom" in to_markdown(table) and "| 96.70 | - |" in to_markdown(table)
    assert "0.967,,," in to_csv([table])
    printed = CliRunner().invoke(app, ["tables", str(tmp_path / "r" / "mean-colour__inshop__main.json")])
    assert printed.exit_code == 0 and "reference:" in printed.output and "open-metric" in printed.output


def test_site_shows_legacy_scopes_and_reference_rows(tmp_path: Path) -> None:
    from lookbench.publish.reports.site import build_site
    from lookbench.publish.reports.sitedata import build_site_data
    from lookbench.results.io import save_run

    out = run(import_dataset("inshop", inshop(tmp_path / "s"), tmp_path / "o", ImportOptions(train=False)))
    path = tmp_path / "r" / "mean-colour__inshop__main.json"
    save_run(out.result, out.per_query, path)
    data = build_site_data([path])
    assert data["scopes"] == ["inshop", "overall"]
    refs = data["published"]["references"]["inshop"]
    assert [r["metrics"]["recall@1"] for r in refs] == [pytest.approx(0.967), pytest.approx(0.921)]
    page = build_site([path], tmp_path / "site")
    assert page.exists() and "inshop" in page.read_text()


def test_site_page_renders_reference_rows_in_a_browser(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parents[2] / "publish" / "site"))
    import browser  # type: ignore[import-not-found]

    if not browser.available():
        pytest.skip("chromium and chromium-driver are not installed")
    from lookbench.publish.reports.site import build_site
    from lookbench.results.io import save_run

    out = run(import_dataset("inshop", inshop(tmp_path / "s"), tmp_path / "o", ImportOptions(train=False)))
    path = tmp_path / "r" / "mean-colour__inshop__main.json"
    save_run(out.result, out.per_query, path)
    index = build_site([path], tmp_path / "site")
    with browser.chromium() as driver:
        driver.get(index.as_uri() + "#metric=recall&k=1")
        block = driver.find_element("css selector", 'details.references[data-scope="inshop"]')
        rows = block.find_elements("css selector", "tr.reference-row")
        assert len(rows) == 2 and "Unicom" in rows[0].text and rows[0].text.endswith("96.70")
        assert not driver.find_elements("css selector", '.published-none[data-scope="inshop"]')
        severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert severe == []


def test_site_shows_deepfashion2_official_recall_with_detector_misses(tmp_path: Path) -> None:
    import sys

    from lookbench.publish.reports.site import build_site
    from lookbench.publish.reports.sitedata import build_site_data
    from lookbench.results.io import save_run

    options = ImportOptions(train=False, detections=df2_detections(tmp_path / "d.json"))
    out = run(import_dataset("deepfashion2", deepfashion2(tmp_path / "s"), tmp_path / "o", options))
    path = tmp_path / "r" / "mean-colour__df2__main.json"
    save_run(out.result, out.per_query, path)
    data = build_site_data([path])
    assert data["families"][:4] == ["fine_recall", "coarse_recall", "item_recall", "recall"]
    q = data["runs"][0]["q"]
    # pair 1's top is found first; pair 2's trousers, missed by the detector, are found third by their crop
    assert q["item"] == [1, 3] and q["recall"] == [1, 0]

    sys.path.insert(0, str(Path(__file__).parents[2] / "publish" / "site"))
    import browser  # type: ignore[import-not-found]

    if not browser.available():
        pytest.skip("chromium and chromium-driver are not installed")
    # beside a LookBench run (dated queries, no official Recall): the page's own windowed path skips it
    rows = [make_row(f"i{n}", "dress", "red", seed=n) for n in range(3)]
    lookbench = write_snapshot(tmp_path / "lb", {"real_studio_flat": {"query": rows[:1], "gallery": rows}})
    plain = evaluate(open_snapshot(lookbench), MeanColour(), EvalSettings(ks=(1, 5), resamples=50))
    save_run(plain.result, plain.per_query, tmp_path / "r" / "mean-colour__v20260101__main.json")
    index = build_site([path, tmp_path / "r" / "mean-colour__v20260101__main.json"], tmp_path / "site")
    cell = 'td.value[data-scope="deepfashion2"][data-metric="{}"]'
    with browser.chromium() as driver:
        for metric, shown in (("recall", "50.00"), ("item_recall", "100.00")):
            driver.get(index.as_uri() + f"#metric={metric}&k=5")
            assert driver.find_element("css selector", cell.format(f"{metric}@5")).text.startswith(shown)
        driver.get(index.as_uri() + "#metric=recall&k=5&since=2025-12-01")
        assert driver.find_elements("css selector", "#tables")
        severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not severe, severe


class ByItem(MeanColour):
    """Embeds a crop by its annotation key and image (`item` and `image_id` columns): a fixed ranking for the test."""

    spec = "test:by-item"

    def __init__(self, vectors: dict[tuple[str, str], list[float]]) -> None:
        self.vectors = vectors

    def embed_split(self, snapshot, subset, split):  # type: ignore[no-untyped-def]
        import numpy as np
        import pyarrow.parquet as pq

        table = pq.read_table(snapshot.files(subset, split)[0], columns=["image_id", "item"])
        keys = zip(table["image_id"].to_pylist(), table["item"].to_pylist(), strict=True)
        return np.asarray([self.vectors[key] for key in keys], dtype=np.float32)


def official_top_k(query: dict, ranked: list[dict], gallery_gt: list[dict], k: int) -> bool:
    """deepfashion2_retrieval_test.py's rule for one query item: some retrieved shop box among the first k lies in an
    image holding ground-truth items of the query's pair_id and style, and overlaps one of them by IoU >= 0.5."""

    def iou(a: list[float], b: list[float]) -> float:  # boxes [x1, y1, x2, y2] as in the annotations
        w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
        return w * h / union

    truth = [g for g in gallery_gt if g["pair_id"] == query["pair_id"] and g["style"] == query["style"]]
    for hit in ranked[:k]:
        boxes = [g["bbox"] for g in truth if g["image_id"] == hit["image_id"]]
        if any(iou(hit["bbox"], b) >= 0.5 for b in boxes):
            return True
    return False


def test_deepfashion2_ground_truth_boxes_follow_the_official_iou_rule(tmp_path: Path) -> None:
    """A shop photo of pair 3 shows the query's top (style 1) under an outerwear box (style 0) that overlaps it by
    IoU 0.88: the official evaluation counts the retrieved outerwear box as a hit for the top."""
    import json

    from legacykit import BLUE, RED, canvas, df2_annotation

    src = deepfashion2(tmp_path / "s")
    top = {"category_id": 1, "category_name": "short sleeve top"}
    outwear = {"category_id": 5, "category_name": "long sleeve outwear"}
    photos = {
        "000005": ("user", 3, [({**top, "style": 1}, [5, 5, 35, 35], RED)]),
        "000006": (
            "shop",
            3,
            [({**outwear, "style": 0}, [4, 4, 36, 36], BLUE), ({**top, "style": 1}, [5, 5, 35, 35], RED)],
        ),
    }
    for image, (source, pair, items) in photos.items():
        annos = [{**item, "bounding_box": box} for item, box, _ in items]
        (src / "validation" / "annos" / f"{image}.json").write_text(json.dumps(df2_annotation(source, pair, annos)))
        canvas(src / "validation" / "image" / f"{image}.jpg", [(box, colour) for _, box, colour in items])
    target = import_dataset("deepfashion2", src, tmp_path / "o", ImportOptions(train=False))
    snap = open_snapshot(target)
    queries = pq.read_table(snap.files("deepfashion2", "query")[0]).to_pylist()
    gallery = pq.read_table(snap.files("deepfashion2", "gallery")[0]).to_pylist()
    # every query meets pair 3's outerwear box first, then the shop items in file order
    first = next(g for g in gallery if g["image_id"] == "000006" and g["item"] == "item1")
    order = [first] + [g for g in gallery if g is not first]
    vectors = {(g["image_id"], g["item"]): [1.0 - 0.01 * n, 0.1 * n] for n, g in enumerate(order)}
    vectors |= {(q["image_id"], q["item"]): [1.0, 0.0] for q in queries}
    out = evaluate(snap, ByItem(vectors), EvalSettings(ks=None, resamples=20))
    gallery_gt = [g for g in gallery if g["style"] > 0]  # gallery_gt.json: the shop items of style > 0
    for k in (1, 5):
        expected = [official_top_k(q, order, gallery_gt, k) for q in queries if q["style"] > 0]
        assert out.per_query[f"recall@{k}"].to_pylist() == [float(e) for e in expected]
    pair3 = [q["pair_id"] for q in queries].index(3)
    assert out.per_query["recall@1"].to_pylist()[pair3] == 1.0  # the outerwear box over the top is a hit
    assert out.per_query["item"].to_pylist()[pair3][0] is False  # by item_ID alone it would not be
