"""What a lower precision changes: fp32 against bf16 (or others) for one real offline model on a snapshot.

    python benchmarks/precision_agreement.py [--model builtin:efficientnet-lite0-torch] [--precisions bf16,fp16]

For each precision the whole snapshot (default: the embedded Synth default) is embedded and evaluated, then
compared with fp32: cosine between the two vectors of every image, top-1 agreement and top-10 overlap of every
query's ranking, and the headline metrics with their differences in points (beside the fp32 interval's half-width,
which says how large a difference the benchmark can see). Vectors are cached like any `lookbench eval` run.
Runs on CPU (bf16/fp16 autocast on CPU) or on CUDA, wherever the model runs.
"""

from __future__ import annotations

import argparse
import os
import time

from agreement import (
    add_common_arguments,
    chosen_snapshot,
    metric_deltas,
    ranking_agreement,
    run,
    vector_agreement,
    write,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    parser.add_argument("--precisions", default="bf16", help="comma-separated, compared with fp32")
    parser.add_argument("--decode", default="cpu", help="cpu (the reference) or device")
    args = parser.parse_args()
    snapshot = chosen_snapshot(args.snapshot)
    started = time.perf_counter()
    reference = run(snapshot, args.model, "fp32", args.resamples, precision="fp32", decode=args.decode)
    report: dict[str, object] = {
        "model": args.model,
        "snapshot": snapshot.snapshot_id,
        "device": reference.provider.describe().get("device"),
        "decode": args.decode,
        "compared_with": "fp32",
    }
    for precision in args.precisions.split(","):
        other = run(snapshot, args.model, precision, args.resamples, precision=precision, decode=args.decode)
        report[precision] = {
            "vectors": vector_agreement(snapshot, reference, other),
            "rankings": ranking_agreement(reference.output.per_query, other.output.per_query),
            "metrics": metric_deltas(reference, other),
        }
    report["wall_s"] = round(time.perf_counter() - started, 1)
    report["load_average_1min"] = round(os.getloadavg()[0], 2)
    write(report, args.json)


if __name__ == "__main__":
    main()
