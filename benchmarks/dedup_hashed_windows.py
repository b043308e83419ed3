"""A prototype, measured: the crop tier's window table searched by stepwise multi-index hashing (`HashedWindows`)
against faiss's exhaustive search (`FaissWindows`) on the same uniformly random window codes, per look-up CPU ms.

    python benchmarks/dedup_hashed_windows.py 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from lookbench.release.fingerprints.crops import WINDOWS
from lookbench.release.fingerprints.tables import FaissWindows, HashedWindows


def main() -> None:
    """Fill both tables with the same codes and time 10 look-ups each, per crop-pair setting."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("entries", type=int)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n, w = args.entries, len(WINDOWS)
    codes = rng.integers(0, 2**63, (n, w), dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, (n, w)).astype(
        np.uint64
    )
    started = time.thread_time()
    hashed = HashedWindows()
    hashed.add(codes, np.ones(n, bool))
    build_s = time.thread_time() - started
    exhaustive = FaissWindows(hashed.codes, hashed.present)
    queries = [rng.integers(0, 2**63, w, dtype=np.uint64) for _ in range(10)]
    result: dict[str, object] = {"entries": n, "build_s": round(build_s, 1), "load": os.getloadavg()[0]}
    for pairs in ("all", "full-frame"):
        exhaustive.nearest(queries[0], 16, 16, pairs)
        for name, table in (("hashed", hashed), ("faiss", exhaustive)):
            started = time.thread_time()
            answers = [table.nearest(q, 16, 16, pairs)[0] for q in queries]
            result[f"{pairs} {name} ms"] = round(1e3 * (time.thread_time() - started) / len(queries), 1)
            result[f"{pairs} {name} answers"] = answers
        if any(not np.array_equal(a, b) for a, b in zip(result[f"{pairs} hashed answers"], answers, strict=True)):
            raise AssertionError("the hashed answer differs from the exhaustive one")
        del result[f"{pairs} hashed answers"], result[f"{pairs} faiss answers"]
    result["answered by hashing"] = hashed.hashed
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
