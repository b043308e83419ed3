"""Token and cost accounting over many requests (thread-safe)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

COUNTERS = ("requests", "retries", "cache_hits", "prompt_tokens", "completion_tokens", "unreadable_usage")


@dataclass
class Usage:
    """Requests, retries, tokens and cost of one stage's calls; cache hits cost nothing."""

    price_in: float = 0.0
    price_out: float = 0.0
    requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unreadable_usage: int = 0
    """Answered requests whose usage block was not whole-number token counts (counted as 0 tokens)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, usage: object) -> None:
        """Count one answered request and its `usage` block (which the server may garble)."""
        block = usage if isinstance(usage, dict) else {}
        tokens = [block.get("prompt_tokens", 0), block.get("completion_tokens", 0)]
        counts = [n for n in tokens if isinstance(n, int) and not isinstance(n, bool) and n >= 0]
        with self._lock:
            self.requests += 1
            if usage is not None and len(counts) < 2:
                self.unreadable_usage += 1
            elif len(counts) == 2:
                self.prompt_tokens += counts[0]
                self.completion_tokens += counts[1]

    def count(self, name: str, n: int = 1) -> None:
        """Add to `retries` or `cache_hits`."""
        with self._lock:
            setattr(self, name, getattr(self, name) + n)

    def counters(self) -> dict[str, float]:
        """The raw counts, as a shard's marker keeps them (summed by the driver over shards)."""
        with self._lock:
            return {name: float(getattr(self, name)) for name in COUNTERS}

    def absorb(self, counters: dict[str, float]) -> None:
        """Add counts kept by shards (which ran in other processes)."""
        with self._lock:
            for name in COUNTERS:
                setattr(self, name, getattr(self, name) + int(counters.get(name, 0)))

    def summary(self) -> dict[str, Any]:
        """Plain numbers for the build log and the card."""
        cost = (self.prompt_tokens * self.price_in + self.completion_tokens * self.price_out) / 1e6
        return {
            "requests": self.requests,
            "retries": self.retries,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "unreadable_usage": self.unreadable_usage,
            "cost": round(cost, 6),
        }
