"""Labels typed in two Unicode normal forms (precomposed NFC, decomposed NFD) are one label wherever compared."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hostilekit import evaluate, make_snapshot, snapshot_spec, vectors, write_vectors

from lookbench.release.sources.metadata import category_label, colour_labels, split_list
from lookbench.taxonomy.loader import load_taxonomy_file
from lookbench.taxonomy.models import TaxonomyError

BEIGE_NFC = unicodedata.normalize("NFC", "Beigé")
BEIGE_NFD = unicodedata.normalize("NFD", "Beigé")


def _spec(gallery_form: str) -> dict:  # type: ignore[type-arg]
    spec = snapshot_spec()
    for subset in spec.values():
        for split, rows in subset.items():
            form = "NFC" if split == "query" else gallery_form
            for row in rows:
                row["main_attribute"] = unicodedata.normalize(form, f"Beigé {row['main_attribute']}")
                row["category"] = unicodedata.normalize(form, f"Robé {row['category']}")
    return spec


def test_one_label_in_either_form_scores_the_same(tmp_path: Path) -> None:
    emb = write_vectors(tmp_path / "e", vectors())
    scores = {}
    for form in ("NFC", "NFD"):
        result = evaluate(make_snapshot(tmp_path / form, _spec(form)), emb, tmp_path / f"{form}.json")
        scores[form] = result["metrics"]
    assert BEIGE_NFC != BEIGE_NFD
    # every query's nearest row is its twin, which carries its labels: a perfect fine match at rank 1
    for form in ("NFC", "NFD"):
        assert scores[form]["real_studio_flat"]["fine_recall@1"]["value"] == 1.0
        assert scores[form]["real_streetlook"]["fine_recall@1"]["value"] == 1.0
    assert scores["NFC"] == scores["NFD"]


def test_release_source_labels_are_normalised() -> None:
    assert colour_labels(f"{BEIGE_NFD} / Navy") == colour_labels(f" {BEIGE_NFC}/navy") == ("beigé", ["navy"])
    assert colour_labels(BEIGE_NFD)[0] == unicodedata.normalize("NFC", "beigé")
    assert category_label(f"Women > {BEIGE_NFD}") == "beigé"
    assert split_list([BEIGE_NFD, " "]) == split_list(f"{BEIGE_NFC}|") == ["beigé"]


@pytest.mark.parametrize("where", ["attribute", "category"])
def test_a_taxonomy_name_not_in_canonical_form_is_refused(tmp_path: Path, where: str) -> None:
    attribute = "beigé" if where == "category" else unicodedata.normalize("NFD", "beigé")
    category = "robé" if where == "attribute" else unicodedata.normalize("NFD", "robé")
    path = tmp_path / "taxonomy.yaml"
    path.write_text(
        "version: '1.0.0'\n"
        "groups:\n  colour:\n    multi: false\n    description: colour\n"
        f"    attributes: {{{attribute}: beige, navy: navy}}\n"
        f"categories:\n  {category}:\n    fashionpedia: dress\n    region: whole body\n"
        "    attributes: {colour: all}\n",
        encoding="utf-8",
    )
    with pytest.raises(TaxonomyError, match="Unicode NFC"):
        load_taxonomy_file(path)
