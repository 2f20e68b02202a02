"""A headless Chromium to check a built viewer site (the browser test, benchmarks/viewer_scale.py):
Debian's `chromium` driven through Debian's `chromium-driver` by Selenium (no driver download), with a fresh
profile and no background traffic,
and the browser's console log kept so a test can insist it is empty."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",  # runs as root in CI containers
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)


def missing_browser() -> str | None:
    """Why no browser can be started here (one line naming the Debian packages), or None when one can."""
    absent = [path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).exists()]
    if not absent:
        return None
    return f"{' and '.join(absent)} not found: apt-get install chromium chromium-driver"


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    """A fresh headless Chromium (its own throw-away profile), quit and cleaned up on exit."""
    profile = tempfile.mkdtemp(prefix="viewer-chromium-")
    options = Options()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
