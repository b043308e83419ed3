"""Write the schema-1.3 fixture: results of the schema-1.2 fixture's snapshot and embeddings folder as the code of
commit 37d6fdb wrote them (run once with that code; `test_schema_compat.py` reads what it wrote), and the Hub card
that code built from the default model's result (`hub_card.md`)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.publish.submissions.modelcard import DatasetRef, card_text
from lookbench.results.io import load_result

OLD = Path(__file__).parent / "v1_2"
HERE = Path(__file__).parent / "v1_3"
README = "---\nlicense: mit\n---\n# A model\n"


def main() -> None:
    """Evaluate both models on the 1.2 fixture's snapshot, keep the results; then build the card."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(OLD / "v20260301", root / "v20260301")
        shutil.copytree(OLD / "tiny-vectors", root / "tiny-vectors")
        out = HERE / "results"
        for model in ("efficientnet-lite0", f"embeddings:{root / 'tiny-vectors'}"):
            args = ["eval", "-s", str(root / "v20260301"), "-m", model, "--resamples", "50"]
            pattern = str(out / "{model}__{snapshot}__{rule}.json")
            done = CliRunner().invoke(app, [*args, "-o", pattern, "--cache-dir", str(root / "cache")])
            assert done.exit_code == 0, done.output
    for path in out.glob("*.json"):
        data = json.loads(path.read_text())
        assert data["schema_version"] == "1.3"
    result = load_result(out / "efficientnet-lite0__v20260301__main.json")
    text = card_text(result, README, "README.md", DatasetRef("srpone/look-bench", "main"))
    (HERE / "hub_card.md").write_text(text)


if __name__ == "__main__":
    main()
