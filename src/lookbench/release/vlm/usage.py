"""Token and cost accounting over many requests (thread-safe)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, usage: dict[str, Any] | None) -> None:
        """Count one answered request and its `usage` block."""
        with self._lock:
            self.requests += 1
            self.prompt_tokens += int((usage or {}).get("prompt_tokens", 0))
            self.completion_tokens += int((usage or {}).get("completion_tokens", 0))

    def count(self, name: str) -> None:
        """Increment `retries` or `cache_hits`."""
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    def summary(self) -> dict[str, Any]:
        """Plain numbers for the build log and the card."""
        cost = (self.prompt_tokens * self.price_in + self.completion_tokens * self.price_out) / 1e6
        return {
            "requests": self.requests,
            "retries": self.retries,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": round(cost, 6),
        }
