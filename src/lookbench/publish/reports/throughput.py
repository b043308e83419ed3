"""How fast a run embedded its images, and on what machine under what load: the page's and the report's words."""

from __future__ import annotations

from lookbench.results.schema import ResultFile


def machine_text(result: ResultFile) -> str:
    """Where and under what load a run was timed: CPU (cores), GPU, 1-minute load at its start and end."""
    env, timings = result.environment, result.timings
    if "cpu" not in env:
        return "machine not recorded (a result file from before lookbench recorded it)"
    parts = [f"{env['cpu']} ({env.get('cores', '?')} cores)"]
    if env.get("gpu"):
        parts.append(f"GPU {env['gpu']}")
    if "load_start" in timings:
        parts.append(f"load {timings['load_start']:.1f} at start, {timings.get('load_end', float('nan')):.1f} at end")
    return ", ".join(parts)


def throughput(result: ResultFile) -> tuple[float | None, str | None]:
    """Images per second over the images this run actually embedded, or None and the reason it is not known."""
    embedded = result.timings.get("embedded_images")
    seconds = result.timings.get("embed_s") or 0.0
    if embedded is None:
        return None, "the result file does not say how many images the run embedded (precomputed or older run)"
    if embedded <= 0:
        return None, "no image was embedded in this run: every vector came from the embedding cache"
    if seconds <= 0:
        return None, "the result file records no embedding time"
    return round(embedded / seconds, 2), None


def throughput_text(result: ResultFile) -> str:
    """One line for a reader: images/s (images, seconds) on the machine, or why the rate is not known."""
    rate, reason = throughput(result)
    if rate is None:
        return f"Throughput not known: {reason}; {machine_text(result)}"
    embedded, seconds = result.timings["embedded_images"], result.timings["embed_s"]
    return f"Throughput: {rate:.1f} images/s ({embedded:.0f} images in {seconds:.2f} s) on {machine_text(result)}"
