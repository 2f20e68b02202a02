"""The harness's public Python API and the `amnesia-bench` CLI (`amnesia_bench.cli`): the only package that
imports both the runners and the reports.

```python
import amnesia_bench

run_dir = amnesia_bench.run(arms=["full-memory", "amnesia"], out="runs/demo")   # replay, then report
frames = amnesia_bench.load_run(run_dir)          # tidy DataFrames: tasks, calls, injections, probes, memory
frames.probes.groupby("arm")["classification"].value_counts(normalize=True)
amnesia_bench.build_report(run_dir, out="runs/demo/report-again")
```
"""

from typing import Any

try:
    from importlib.metadata import PackageNotFoundError, version

    __version__ = version("dsh-memory-forget")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["DEFAULT_ARMS", "__version__", "build_report", "load_run", "run"]


def __getattr__(name: str) -> Any:
    """The API (amnesia_bench.api), imported on first use so that `amnesia-bench` starts without it."""
    if name in ("DEFAULT_ARMS", "build_report", "load_run", "run"):
        from amnesia_bench import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
