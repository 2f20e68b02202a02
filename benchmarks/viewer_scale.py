"""Viewer at scale: `amnesia-bench view` over a run of 10,000 generated tasks x 3 arms, then the page in a
headless Chromium opened from disk.

    python benchmarks/viewer_scale.py                 # 10,000 tasks (about 10 minutes on 2 cores)
    python benchmarks/viewer_scale.py --tasks 1000    # quicker

Prints: the site's size (the index every page view loads, the largest task file, the whole folder); the time
to build the site as a ratio to reading the same logs the way `amnesia-bench report` does (`load_runs`, the
reference measured in the same run); and in the browser, the time until the task list shows, to apply a
filter, to open a task (its data file loaded on demand) and to render two arms side by side.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from reports.logread import load_runs
from reports.viewer import build_viewer
from runners.armconfig import resolve_arm_specs
from runners.runner import RunOptions, run
from tasks.generate import generate, write_generated

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the test's browser set-up
from reports.viewer.browser import chromium

ARMS = ["no-memory", "full-memory", "amnesia"]
GROUPS = ("helpful", "harmful", "mixed")


def _timed(action):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = action()
    return result, time.perf_counter() - started


def _in_page(driver: webdriver.Chrome, index: Path) -> dict[str, float]:
    wait = WebDriverWait(driver, 300)
    (_, list_s) = _timed(
        lambda: (driver.get(index.as_uri()), wait.until(lambda d: d.find_elements(By.ID, "task-list")))
    )
    # Filters run synchronously in the change handler: time them inside the page.
    filter_ms = driver.execute_script(
        """
        const control = document.getElementById('filter-classification');
        control.value = 'stale';
        const started = performance.now();
        control.dispatchEvent(new Event('change'));
        return performance.now() - started;
        """
    )
    shown = driver.find_element(By.ID, "task-count").text
    first = driver.find_element(By.CSS_SELECTOR, "#task-list tbody tr a")
    (_, open_s) = _timed(lambda: (first.click(), wait.until(lambda d: d.find_elements(By.ID, "timeline"))))
    (_, side_s) = _timed(
        lambda: (
            Select(driver.find_element(By.ID, "arm-b")).select_by_value("amnesia"),
            wait.until(lambda d: d.find_elements(By.ID, "side-by-side")),
        )
    )
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    print(f"filter 'stale': {shown}")
    return {
        "list_s": list_s,
        "filter_ms": filter_ms,
        "open_s": open_s,
        "side_s": side_s,
        "errors": len(errors),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        per_group = [args.tasks // 3 + (1 if i < args.tasks % 3 else 0) for i in range(3)]
        write_generated(
            [t for group, n in zip(GROUPS, per_group, strict=True) for t in generate(group, n, seed=1)],
            folder / "tasks",
        )
        options = RunOptions(
            tasks=folder / "tasks",
            arms=resolve_arm_specs(ARMS),
            out=folder / "run",
            workers=args.workers,
            progress=False,
        )
        summary = run(options)
        logs_mb = sum(p.stat().st_size for p in (folder / "run" / "logs").rglob("*.jsonl")) / 1e6
        _, read_s = _timed(lambda: load_runs([folder / "run"]))
        _, build_s = _timed(lambda: build_viewer([folder / "run"], folder / "site"))
        site = folder / "site"
        index_mb = (site / "data" / "index.js").stat().st_size / 1e6
        largest_kb = max(p.stat().st_size for p in (site / "data" / "tasks").glob("*.js")) / 1e3
        site_mb = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 1e6
        with chromium() as driver:
            page = _in_page(driver, site / "index.html")
    figures = {
        "tasks": f"{args.tasks:,}",
        "pairs": f"{summary.pairs:,}",
        "logs MB": f"{logs_mb:.0f}",
        "site MB": f"{site_mb:.0f}",
        "index.js MB": f"{index_mb:.2f}",
        "largest task file KB": f"{largest_kb:.0f}",
        "build s": f"{build_s:.1f}",
        "report's log read s": f"{read_s:.1f}",
        "build / read": f"{build_s / read_s:.2f}",
        "list shown s": f"{page['list_s']:.2f}",
        "filter ms": f"{page['filter_ms']:.0f}",
        "open a task s": f"{page['open_s']:.2f}",
        "side by side s": f"{page['side_s']:.2f}",
        "console errors": str(page["errors"]),
    }
    print("| " + " | ".join(figures) + " |")
    print("|" + "---:|" * len(figures))
    print("| " + " | ".join(figures.values()) + " |")


if __name__ == "__main__":
    main()
