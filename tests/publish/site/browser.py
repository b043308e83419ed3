"""Headless Debian Chromium driven by selenium, offline: no browser or driver download, no network services."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def available() -> bool:
    """True when the Debian chromium and chromium-driver packages are installed."""
    return CHROMIUM.is_file() and CHROMEDRIVER.is_file()


NEEDS_CHROMIUM = pytest.mark.skipif(
    not available(), reason="needs Debian chromium + chromium-driver (scripts/ensure-chromium.sh)"
)


@contextmanager
def chromium(width: int = 1280, height: int = 1000) -> Iterator[Any]:
    """A selenium Chrome driver on a fresh profile, its viewport `width` CSS pixels wide.

    selenium-manager never runs (explicit driver and binary).
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="lookbench-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        driver.set_window_size(width, height)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver: Any, url: str) -> None:
    """Load `url` as a fresh page, even where it differs from the current one only in its `#` state."""
    driver.get("about:blank")
    driver.get(url)
