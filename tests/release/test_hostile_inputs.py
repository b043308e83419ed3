"""Inputs that must never stop a build: each becomes a problem naming the URL or file, and the build goes on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from chatkit import ChatServer, Truth
from chatkit import serve as serve_chat
from releasekit import (
    HTML,
    PNG,
    Shop,
    collect_problems,
    encode,
    photo,
    product_page,
    published_rows,
    run_build,
    serve,
    serve_good_products,
    shop_source,
    sitemap,
    write_catalog,
    write_yaml,
)

from lookbench.taxonomy import load_taxonomy

VERSION = "v20260601"
TRUTH = Truth("dress", "red", ["striped", "v-neck", "long sleeve", "midi", "a-line"])


@pytest.fixture
def shop():
    with serve(Shop()) as running:
        yield running


def _shop_build(tmp_path: Path, shop: Shop, pages: dict[str, str | None]):
    shop.routes["/sitemap.xml"] = (200, {"Content-Type": "application/xml"}, sitemap(shop, pages))
    data = {"release_date": "2026-06-01", "output": "out", "sources": [shop_source(shop)]}
    return run_build(write_yaml(tmp_path / "release.yaml", data))


def test_out_of_range_json_ld_dates_are_problems(tmp_path, shop):
    pages: dict[str, str | None] = {}
    serve_good_products(shop, pages)
    for n, (path, when) in enumerate(
        (("/p/early", "0001-01-01T00:00:00+14:00"), ("/p/late", "9999-12-31T23:59:59-14:00"))
    ):
        images = [f"/img/d{n}a.png", f"/img/d{n}b.png"]
        shop.routes[path] = (200, HTML, product_page(f"D{n}", "Dated", "Shirts", "Blue", images, when))
        for k, image in enumerate(images):
            shop.routes[image] = (200, PNG, encode(photo(50 + 2 * n + k)))
        pages[path] = "2026-05-02"
    result = _shop_build(tmp_path, shop, pages)
    assert result.exit_code == 0, result.output
    problems = collect_problems(tmp_path / "out", VERSION, "testshop")
    assert "out of range" in problems[shop.url("/p/early")] and "out of range" in problems[shop.url("/p/late")]
    dated = [r for r in published_rows(tmp_path / "out" / VERSION) if r["product_id"] in ("D0", "D1")]
    assert len(dated) == 4 and {r["published_at_origin"] for r in dated} == {"sitemap lastmod"}
    again = _shop_build(tmp_path, shop, pages)
    assert again.exit_code == 0 and again.output.count("already done") == 4, again.output


def test_deeply_nested_json_ld_is_a_problem(tmp_path, shop):
    pages: dict[str, str | None] = {}
    serve_good_products(shop, pages)
    nested = '<html><head><script type="application/ld+json">' + "[" * 200_000 + "</script></head></html>"
    shop.routes["/p/nested"] = (200, HTML, nested.encode())
    pages["/p/nested"] = "2026-05-02"
    result = _shop_build(tmp_path, shop, pages)
    assert result.exit_code == 0, result.output
    problems = collect_problems(tmp_path / "out", VERSION, "testshop")
    assert "nested" in problems[shop.url("/p/nested")]


def test_deeply_nested_generation_records_are_problems(tmp_path):
    folder = tmp_path / "generated"
    folder.mkdir()
    lines = []
    for n in range(2):
        (folder / f"g{n}.png").write_bytes(encode(photo(60 + n)))
        record = {
            "file": f"g{n}.png",
            "product_id": "G1",
            "category": "jacket",
            "main_attribute": "black",
            "generator": {"model": "m", "revision": "r"},
            "prompt": "p",
            "seed": n,
            "steps": 1,
            "created_at": "2026-05-01",
        }
        lines.append(json.dumps(record))
    lines.insert(1, "[" * 200_000)
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n")
    source = {"kind": "generated", "name": "gen", "path": "generated"}
    result = run_build(
        write_yaml(tmp_path / "r.yaml", {"release_date": "2026-06-01", "output": "out", "sources": [source]})
    )
    assert result.exit_code == 0, result.output
    problems = collect_problems(tmp_path / "out", VERSION, "gen")
    assert "nested" in problems[f"{folder / 'records.jsonl'}:2"]


def test_catalog_paths_stay_inside_the_catalog_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.png").write_bytes(encode(photo(40)))
    write_catalog(tmp_path / "catalog", {"P1": [encode(photo(41)), encode(photo(42))]})
    manifest = tmp_path / "catalog" / "manifest.csv"
    with manifest.open("a") as fh:
        for pid, path in (("P2", "../outside/x.png"), ("P3", "/etc/passwd"), ("P4", str(outside / "x.png"))):
            fh.write(f"{path},{pid},dress,Red,2026-03-15,Brand\n")
    source = {"kind": "catalog", "name": "cat", "path": "catalog"}
    result = run_build(
        write_yaml(tmp_path / "r.yaml", {"release_date": "2026-06-01", "output": "out", "sources": [source]})
    )
    assert result.exit_code == 0, result.output
    problems = collect_problems(tmp_path / "out", VERSION, "cat")
    for line in (4, 5, 6):
        assert "outside the catalog folder" in problems[f"{manifest}:{line}"]
    assert {r["product_id"] for r in published_rows(tmp_path / "out" / VERSION)} == {"P1"}


def test_no_published_url_names_a_file_of_the_build_machine(tmp_path):
    write_catalog(tmp_path / "catalog", {"P1": [encode(photo(43)), encode(photo(44))]})
    source = {"kind": "catalog", "name": "cat", "path": "catalog"}
    result = run_build(
        write_yaml(tmp_path / "r.yaml", {"release_date": "2026-06-01", "output": "out", "sources": [source]})
    )
    assert result.exit_code == 0, result.output
    rows = published_rows(tmp_path / "out" / VERSION)
    assert rows
    for row in rows:
        for column in ("source_url", "image_url"):
            assert not str(row[column]).startswith("file:") and str(tmp_path) not in str(row[column]), row[column]


# --- VLM and judge answers -------------------------------------------------------------------------------------------


def _labelled_release(tmp_path: Path, server: ChatServer, output: str = "out", products: int = 4, **extra: Any):
    """A catalog of two-image dress products the server knows, annotated (and optionally audited) over its API."""
    images = {f"D{n}": [encode(photo(300 + 2 * n)), encode(photo(301 + 2 * n))] for n in range(products)}
    write_catalog(tmp_path / "catalog", images)
    keys = [server.learn(image, TRUTH) for pair in images.values() for image in pair]
    api = {"base_url": server.base_url, "model": "qwen-local", "timeout_s": 5, "retries": 1}
    data = {
        "release_date": "2026-06-01",
        "output": output,
        "sources": [{"kind": "catalog", "name": "cat", "path": "catalog"}],
        "annotate": {"backend": "openai", "api": api, "cache_dir": "cache"},
        **extra,
    }
    return write_yaml(tmp_path / f"{output}.yaml", data), keys


def test_replies_that_are_not_chat_completions_are_flagged(tmp_path):
    server = ChatServer()
    with serve_chat(server):
        audit = {"api": {"base_url": server.base_url, "model": "judge", "retries": 0}, "margin": 0.3}
        config, keys = _labelled_release(tmp_path, server, audit=audit)
        server.scripts = {
            keys[0]: ["body-list", "body-null"],
            keys[1]: ["body-null", "ok"],
            keys[2]: ["usage-text"],
            **{key: ["ok", "body-list", "body-null", "usage-text"] for key in keys[3:]},
        }
        result = run_build(config)
    assert result.exit_code == 0, result.output
    flagged = pq.read_table(tmp_path / "out" / "_work" / VERSION / "annotate" / "flagged.parquet").to_pylist()
    assert len(flagged) == 1
    rows = published_rows(tmp_path / "out" / VERSION)
    assert len(rows) == 7 and all(r["label_source"] == "openai" for r in rows)


def test_empty_and_corrupt_answer_caches_are_asked_again(tmp_path):
    server = ChatServer()
    with serve_chat(server):
        audit = {"api": {"base_url": server.base_url, "model": "judge"}, "margin": 0.3}
        config, _ = _labelled_release(tmp_path, server, audit=audit)
        first = run_build(config)
        assert first.exit_code == 0, first.output
        asked = sum(server.requests.values())
        caches = [*(tmp_path / "cache").rglob("*.json"), *(tmp_path / "out" / "_state").rglob("*cache*/**/*.json")]
        assert len(caches) > 8
        for n, path in enumerate(sorted(caches)):
            path.write_bytes(b"" if n % 2 else b'{"main_attribute": ')
        for stale in (tmp_path / "out" / VERSION, tmp_path / "out" / "_work"):
            shutil.rmtree(stale)
        again = run_build(config)
    assert again.exit_code == 0, again.output
    assert sum(server.requests.values()) - asked >= len(caches) - 1
    assert all(r["label_source"] == "openai" for r in published_rows(tmp_path / "out" / VERSION))


def test_invalid_answers_are_never_cached_and_the_endpoint_keys_the_cache(tmp_path):
    broken, healthy = ChatServer(), ChatServer()
    with serve_chat(broken), serve_chat(healthy):
        config, keys = _labelled_release(tmp_path, broken, output="out1")
        broken.scripts = {key: ["invalid"] * 4 for key in keys[:2]}
        first = run_build(config)
        assert first.exit_code == 0, first.output
        second, _ = _labelled_release(tmp_path, healthy, output="out2")
        again = run_build(second)
    assert again.exit_code == 0, again.output
    # a new endpoint is asked afresh, and nothing the broken one said was kept
    assert healthy.requests["garment_attributes"] == len(keys)
    assert len(published_rows(tmp_path / "out2" / VERSION)) == len(keys)


def _tamper(value: Any, names: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _tamper(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_tamper(v, names) for v in value]
    if isinstance(value, str) and value in names:
        return "sparkly"
    if isinstance(value, str) and value.startswith("{"):
        try:
            return json.dumps(_tamper(json.loads(value), names))
        except ValueError:
            return value
    return value


def test_cached_answers_are_validated_again_when_read(tmp_path):
    server = ChatServer()
    names = set(load_taxonomy().category("dress").attribute_names())
    with serve_chat(server):
        config, keys = _labelled_release(tmp_path, server, output="out1")
        assert run_build(config).exit_code == 0
        before = server.requests["garment_attributes"]
        for path in (tmp_path / "cache").rglob("*.json"):
            path.write_text(json.dumps(_tamper(json.loads(path.read_text()), names)))
        second, _ = _labelled_release(tmp_path, server, output="out2")
        again = run_build(second)
    assert again.exit_code == 0, again.output
    assert server.requests["garment_attributes"] - before == len(keys)
    rows = published_rows(tmp_path / "out2" / VERSION)
    assert rows and not any("sparkly" in [r["main_attribute"], *r["other_attributes"]] for r in rows)
