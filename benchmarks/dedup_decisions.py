"""First-seen-wins dedup decisions on a Synth snapshot's first images, as JSON: run it on two checkouts and compare.

Each image is looked up (pHash 24 bits, colour 1%, crop tier 16 bits) among the images kept before it and added
when nothing matches, as the dedup stage does; the output lists, per image, the match (key, tier, distance) or
null, and the CPU seconds taken. Two code versions decide alike when their outputs' decisions are equal:

    PYTHONPATH=OLD/src python benchmarks/dedup_decisions.py SNAPSHOT --count 700 > old.json
    PYTHONPATH=NEW/src python benchmarks/dedup_decisions.py SNAPSHOT --count 700 > new.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import get_args

from dedup_errors import synth_images

from lookbench.release.config import CropPairs
from lookbench.release.fingerprints.hashes import fingerprint
from lookbench.release.fingerprints.index import FingerprintIndex
from lookbench.snapshot import open_snapshot


def main() -> None:
    """Print the decisions as one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--count", type=int, default=700)
    parser.add_argument("--crop-pairs", choices=get_args(CropPairs), default="all", help="dedup.crop_pairs")
    args = parser.parse_args()
    rows = synth_images(open_snapshot(args.snapshot))[: args.count]
    by_key = {str(i): row.data for i, row in enumerate(rows)}
    index = FingerprintIndex(by_key.__getitem__, crop_pairs=args.crop_pairs)
    decisions: list[list[object] | None] = []
    started = time.process_time()
    for i, row in enumerate(rows):
        query = fingerprint(row.data)
        match = index.lookup(query, 24, 0.01, True, 16).match
        if match is None:
            index.add(str(i), query.sha256, query.phash, query.windows)
        decisions.append(None if match is None else [match.key, match.tier, match.distance])
    print(json.dumps({"cpu_s": round(time.process_time() - started, 1), "decisions": decisions}))


if __name__ == "__main__":
    main()
