"""End to end: a local shop, a catalog and generated images built into v1, then v2 with re-used images excluded."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from releasekit import (
    HTML,
    PNG,
    Shop,
    add_product,
    closed_port,
    encode,
    near_copy,
    photo,
    product_page,
    serve,
    sitemap,
    truncated,
    write_catalog,
)
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.results.audit_io import AUDIT_NAME, read_audit
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.manifest import manifest_problems, read_manifest


def og_page(sku: str, images: list[str]) -> bytes:
    """A page whose JSON-LD is broken; OpenGraph tags carry the product."""
    metas = "".join(f'<meta property="og:image" content="{u}">' for u in images)
    return (
        '<html><head><script type="application/ld+json">{"@type": "Product", "name": broken</script>'
        f'<meta property="og:title" content="Scarf {sku}"><meta property="product:retailer_item_id" content="{sku}">'
        '<meta property="product:category" content="Accessories > Scarves">'
        '<meta property="product:color" content="Green">'
        f"{metas}</head></html>"
    ).encode()


def write_generated(folder: Path, products: dict[str, list[bytes]]) -> None:
    """A generated-image folder with records.jsonl (plus one record lacking its seed)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for pid, images in products.items():
        for n, data in enumerate(images):
            name = f"{pid}_{n}.png"
            (folder / name).write_bytes(data)
            record = {
                "file": name,
                "product_id": pid,
                "category": "jacket",
                "main_attribute": "black",
                "other_attributes": ["leather"],
                "generator": {"model": "example/diffusion", "revision": "abc123"},
                "prompt": f"studio photo of a black leather jacket, view {n}",
                "seed": 1000 + n,
                "steps": 30,
                "created_at": "2026-05-20T08:00:00Z",
            }
            lines.append(json.dumps(record))
    lines.append(json.dumps({"file": "missing.png", "product_id": "g9", "category": "x", "main_attribute": "y"}))
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n")


def write_config(path: Path, release: str, shop: Shop, dead_host: str, root: Path) -> Path:
    config = {
        "release_date": release,
        "output": "out",
        "title": "LookBench test",
        "changelog": f"release {release}",
        "sources": [
            {
                "kind": "shop",
                "name": "testshop",
                "hosts": [shop.host, dead_host],
                "scheme": "http",
                "rate_limit_s": 0.0,
                "timeout_s": 3,
                "max_image_bytes": 60_000,
                "max_images_per_product": 12,
                "user_agent": "lookbench-test",
                "license": "shop terms: research use",
            },
            {"kind": "catalog", "name": "owncat", "path": "catalog", "license": "internal"},
            {"kind": "generated", "name": "gen", "path": "generated", "license": "CC-BY-4.0"},
        ],
    }
    path.write_text(yaml.safe_dump(config))
    return path


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file()
    }


def rows(snapshot_dir: Path, subset: str, split: str) -> list[dict[str, Any]]:
    return pq.read_table(snapshot_dir / subset / f"{split}.parquet").to_pylist()


@pytest.fixture
def world(tmp_path: Path):
    shop = Shop()
    with serve(shop):
        yield shop, tmp_path


def build(config: Path) -> Any:
    result = CliRunner().invoke(app, ["release", str(config), "--show-problems", "100"])
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.slow
def test_two_releases(world):
    shop, root = world
    dead = f"127.0.0.1:{closed_port()}"
    img = {i: photo(i) for i in range(40)}
    big = encode(photo(99, size=512))
    assert len(big) > 60_000
    shop.routes["/robots.txt"] = (
        200,
        {"Content-Type": "text/plain"},
        f"User-agent: *\nDisallow: /private/\nSitemap: {shop.url('/sitemap.xml')}\n".encode(),
    )
    add_product(
        shop,
        "/p/1",
        "P1",
        "Women > Tops > Shirts",
        "Red",
        {"/img/1a.png": encode(img[1]), "/img/1b.jpg": encode(img[2], "JPEG")},
    )
    add_product(
        shop,
        "/p/2",
        "P2",
        "Women > Trousers",
        "Blue/Black",
        {"/img/2a.png": encode(img[3]), "/img/2b.png": encode(img[4])},
    )
    shop.routes["/p/3"] = (200, HTML, og_page("P3", [shop.url("/img/3a.png"), "/img/3b.png"]))
    shop.routes["/img/3a.png"] = (200, PNG, encode(img[5]))
    shop.routes["/img/3b.png"] = (200, PNG, encode(img[6]))
    bad_images = [
        "/img/4a.png",
        "/img/4b.png",
        "/img/html.png",
        "/img/fake.png",
        "/img/big.png",
        "/img/trunc.png",
        f"http://{dead}/img/x.png",
        "/img/redirect.png",
        "ftp://127.0.0.1/img/x.png",
    ]
    add_product(shop, "/p/4", "P4", "Shoes", "White", {"/img/4a.png": encode(img[7]), "/img/4b.png": encode(img[8])})
    shop.routes["/p/4"] = (200, HTML, product_page("P4", "Item P4", "Shoes", "White", bad_images, "2026-04-02"))
    shop.routes["/img/html.png"] = (200, {"Content-Type": "text/html"}, b"<html>not an image</html>")
    shop.routes["/img/fake.png"] = (200, PNG, b"<html>an HTML page labelled image/png</html>")
    shop.routes["/img/big.png"] = (200, PNG, big)
    shop.routes["/img/trunc.png"] = truncated(encode(img[9])[:200], 5000)
    shop.routes["/img/redirect.png"] = (302, {"Location": f"http://localhost:{shop.port}/img/4a.png"}, b"")
    shop.routes["/p/5"] = (200, HTML, b'<html><script type="application/ld+json">{nope</script></html>')
    shop.routes["/private/p/9"] = (
        200,
        HTML,
        product_page("P9", "Secret", "Shirts", "Red", ["/img/1a.png"], "2026-04-01"),
    )
    add_product(shop, "/p/8", "P8", "Hats", "Beige", {"/img/8a.png": encode(img[18]), "/img/8b.png": encode(img[19])})
    pages: dict[str, str | None] = {
        "/p/8": None,
        "/p/1": "2026-05-01",
        "/p/2": "2026-05-02",
        "/p/3": "2026-05-03",
        "/p/4": "2026-05-04",
        "/p/5": "2026-05-05",
    }
    pages["/private/p/9"] = "2026-05-06"
    shop.routes["/sitemap.xml"] = (200, {"Content-Type": "application/xml"}, sitemap(shop, pages))
    write_catalog(
        root / "catalog", {"C1": [encode(img[10]), encode(img[11])], "C2": [encode(img[12]), encode(img[13])]}
    )
    write_generated(
        root / "generated", {"G1": [encode(img[14]), encode(img[15])], "G2": [encode(img[16]), encode(img[17])]}
    )
    config = write_config(root / "v1.yaml", "2026-06-01", shop, dead, root)

    result = build(config)
    out = root / "out"
    v1 = out / "v20260601"
    assert not any(p.startswith("/private/") for p in shop.paths())
    assert all(ua == "lookbench-test" for _, _, ua in shop.requests)
    problems = [
        json.loads(line)
        for line in (root / "out/_work/v20260601/collect/testshop.problems.jsonl").read_text().splitlines()
    ]
    by_url = {p["url"]: p["error"] for p in problems}
    assert "not valid JSON" in by_url[shop.url("/p/3")]
    assert "content type 'text/html'" in by_url[shop.url("/img/html.png")]
    assert "exceeds the limit" in by_url[shop.url("/img/big.png")]
    assert "not a decodable image" in by_url[shop.url("/img/fake.png")]
    assert (
        "RemoteProtocolError" in by_url[shop.url("/img/trunc.png")] or "decodable" in by_url[shop.url("/img/trunc.png")]
    )
    assert "ConnectError" in by_url[f"http://{dead}/img/x.png"]
    assert "not one of the configured hosts" in by_url[f"http://localhost:{shop.port}/img/4a.png"]
    assert "only http(s)" in by_url["ftp://127.0.0.1/img/x.png"]
    assert "no schema.org Product" in by_url[shop.url("/p/5")]
    assert "disallowed by robots.txt" in by_url[shop.url("/private/p/9")]
    assert shop.url("/img/big.png") in result.output
    gen_problems = (root / "out/_work/v20260601/collect/gen.problems.jsonl").read_text()
    assert "records.jsonl:5" in gen_problems
    assert (root / "out/_work/v20260601/collect/testshop/pages.warc.gz").stat().st_size > 0

    snap = open_snapshot(v1)
    snap.validate(check_images=True)
    assert snap.subsets == ["real_studio_flat", "aigen_studio"]
    assert read_manifest(v1) is not None and manifest_problems(v1, read_manifest(v1)) == []
    queries = rows(v1, "real_studio_flat", "query")
    gallery = rows(v1, "real_studio_flat", "gallery")
    assert len(queries) == 7 and len(gallery) == 7
    assert {q["item_ID"] for q in queries} == {g["item_ID"] for g in gallery}
    shirts = next(q for q in queries if q["product_id"] == "P1")
    assert (shirts["category"], shirts["main_attribute"], shirts["source"]) == ("shirts", "red", "testshop")
    assert shirts["published_at_origin"] == "json-ld datePublished" and shirts["source_url"] == shop.url("/p/1")
    assert (
        shirts["first_seen_at"] is not None
        and shirts["image_sha256"] == hashlib.sha256(shirts["image"]["bytes"]).hexdigest()
    )
    scarf = next(q for q in queries if q["product_id"] == "P3")
    assert (scarf["category"], scarf["main_attribute"]) == ("scarves", "green")
    trousers = next(q for q in queries if q["product_id"] == "P2")
    assert trousers["other_attributes"] == ["black"]
    generated = rows(v1, "aigen_studio", "query")
    assert len(generated) == 2 and all(r["generated"] for r in generated)
    assert json.loads(generated[0]["generation"])["generator"] == {"model": "example/diffusion", "revision": "abc123"}
    assert generated[0]["published_at_origin"] == "generator"
    card = (out / "README.md").read_text()
    assert "config_name: real_studio_flat\n" in card and "v20260601/real_studio_flat/query.parquet" in card
    audit = read_audit(v1 / AUDIT_NAME)  # the source audit, in the manifest and on the version's card
    assert audit.snapshot.id == "v20260601" and set(audit.label_consistency) <= set(audit.queries)
    assert AUDIT_NAME in json.loads((v1 / "MANIFEST.json").read_text())["files"]
    assert "## Source audit: distractors against galleries" in (v1 / "README.md").read_text()
    v1_digest = tree_digest(v1)

    # second release: new and changed pages, re-used images (exact and resized/mirrored/re-encoded copies)
    shop.requests.clear()
    p8 = shop.routes["/p/8"]
    assert not callable(p8)

    def not_modified_since(handler: Any) -> None:
        if handler.headers.get("If-Modified-Since"):
            handler.send_response(304)
            handler.end_headers()
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", str(len(p8[2])))
        handler.end_headers()
        handler.wfile.write(p8[2])

    shop.routes["/p/8"] = not_modified_since
    add_product(
        shop, "/p/6", "P6", "Dresses", "Yellow", {"/img/6a.png": encode(img[20]), "/img/6b.jpg": near_copy(img[1])}
    )
    add_product(
        shop, "/p/7", "P7", "Knitwear", "Grey", {"/img/7a.png": encode(img[21]), "/img/7b.png": encode(img[22])}
    )
    add_product(
        shop, "/p/2", "P2", "Women > Trousers", "Blue", {"/img/2a.png": encode(img[3]), "/img/2c.png": encode(img[23])}
    )
    pages.update({"/p/2": "2026-11-02", "/p/6": "2026-11-03", "/p/7": "2026-11-04"})
    shop.routes["/sitemap.xml"] = (200, {"Content-Type": "application/xml"}, sitemap(shop, pages))
    write_catalog(
        root / "catalog", {"C1": [encode(img[10]), encode(img[11])], "C3": [encode(img[24]), encode(img[25])]}
    )
    config2 = write_config(root / "v2.yaml", "2026-12-01", shop, dead, root)
    result2 = build(config2)
    v2 = out / "v20261201"
    fetched = set(shop.paths())
    assert {"/p/2", "/p/6", "/p/7", "/p/8"} <= fetched
    assert not fetched & {"/p/1", "/p/3", "/p/4", "/p/5", "/img/1a.png", "/img/big.png", "/img/8a.png"}
    assert not any(p.startswith("/private/") for p in fetched)
    assert tree_digest(v1) == v1_digest
    for version in (v1, v2):
        ok = CliRunner().invoke(app, ["snapshot", "verify", str(version)])
        assert ok.exit_code == 0, ok.output
        open_snapshot(version).validate(check_images=True)
    manifest = read_manifest(v2)
    assert manifest is not None
    dedup = manifest["release"]["dedup"]
    excluded = dedup["excluded_as_duplicates_of_earlier_versions"]
    assert excluded.get("exact", 0) >= 3 and excluded.get("perceptual", 0) >= 1
    v1_hashes = {r["image_sha256"] for s in ("query", "gallery") for r in rows(v1, "real_studio_flat", s)}
    v2_rows = [r for s in ("query", "gallery") for r in rows(v2, "real_studio_flat", s)]
    assert not {r["image_sha256"] for r in v2_rows} & v1_hashes
    products = {r["product_id"] for r in rows(v2, "real_studio_flat", "query")}
    assert products == {"P7", "C3"}
    assert {r["product_id"] for r in v2_rows} == {"P2", "P6", "P7", "C3"}
    card = (out / "README.md").read_text()
    assert "config_name: real_studio_flat\n" in card and "v20261201/real_studio_flat/query.parquet" in card
    assert "config_name: real_studio_flat-v20260601" in card and "release 2026-12-01" in card
    assert "excluded as duplicates of earlier versions" in (v2 / "README.md").read_text()
    assert "dedup" in result2.output
    info = CliRunner().invoke(app, ["snapshot", "info", str(v2)])
    assert info.exit_code == 0 and "duplicates of earlier versions excluded" in info.output

    # a re-run resumes: every stage is skipped and nothing is requested
    shop.requests.clear()
    rerun = build(config2)
    assert rerun.output.count("already done") == 4 and shop.requests == []
