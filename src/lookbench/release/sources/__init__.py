"""Sources of samples; a new source is one module plus one line in `make_source`."""

from __future__ import annotations

from lookbench.release.config import CatalogSource, GeneratedSource, ShopSource, SourceConfig, SynthSource
from lookbench.release.sources.base import CollectContext, Source


def make_source(config: SourceConfig) -> Source:
    """The collector for one configured source."""
    if isinstance(config, ShopSource):
        from lookbench.release.sources.shop.source import ShopCollector

        return ShopCollector(config)
    if isinstance(config, CatalogSource):
        from lookbench.release.sources.catalog import CatalogCollector

        return CatalogCollector(config)
    if isinstance(config, GeneratedSource):
        from lookbench.release.sources.generated import GeneratedCollector

        return GeneratedCollector(config)
    if isinstance(config, SynthSource):
        from lookbench.release.sources.synth import SynthCollector

        return SynthCollector(config)
    raise TypeError(f"unknown source config {type(config).__name__}")


__all__ = ["CollectContext", "Source", "make_source"]
