"""Refresh the `reported` block of every model card from the published leaderboard file; other facts are untouched.

    python tools/refresh_reported_numbers.py [--leaderboard ../shared/reference/lookbench_leaderboard_v2601.json]

The card JSON files are the source of truth for model facts (each card's `notes` names its sources); only the
authors' published numbers are derived data.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CARDS = ROOT / "src" / "lookbench" / "models" / "cards"
LEADERBOARD = ROOT.parent / "shared" / "reference" / "lookbench_leaderboard_v2601.json"
SUBSETS = {
    "Real Studio": "real_studio_flat",
    "AI-Gen Studio": "aigen_studio",
    "Real StreetLook": "real_streetlook",
    "AI-Gen StreetLook": "aigen_streetlook",
}


def reported(leaderboard: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The card's `reported` block for leaderboard row `name`, or None when no subset lists it."""
    metrics = {SUBSETS[tab]: rows[name] for tab, rows in leaderboard.items() if tab in SUBSETS and name in rows}
    return {"leaderboard_name": name, "metrics": metrics} if metrics else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--leaderboard", type=Path, default=LEADERBOARD)
    args = parser.parse_args()
    leaderboard = json.loads(args.leaderboard.read_text())
    changed = 0
    for path in sorted(CARDS.glob("*.json")):
        card = json.loads(path.read_text())
        name = (card.get("reported") or {}).get("leaderboard_name", card["name"])
        block = reported(leaderboard, name)
        if block != card.get("reported"):
            card["reported"] = block
            path.write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n")
            changed += 1
    print(f"{changed} card(s) changed in {CARDS}", file=sys.stderr)


if __name__ == "__main__":
    main()
