"""`paused_gc`: the cyclic collector is off inside the block and restored as it was, also after an error."""

from __future__ import annotations

import gc

import pytest

from lookbench.gcpause import paused_gc


@pytest.mark.parametrize("enabled", [True, False])
def test_paused_gc_restores_the_collector_as_it_was(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with paused_gc():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError), paused_gc():
            raise RuntimeError("inside")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
