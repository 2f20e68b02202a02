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

__all__ = ["DEFAULT_ARMS", "__version__", "build_report", "load_run", "run"]


def _installed_version() -> str:
    """The installed distribution's version, or `0.0.0+unknown` in a source tree that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dsh-memory-forget")
    except PackageNotFoundError:
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    """`__version__` and the API (amnesia_bench.api), made on first use so that `amnesia-bench` starts
    without them (importlib.metadata and its look-up cost every command 17 ms before it begins)."""
    if name == "__version__":
        globals()["__version__"] = found = _installed_version()  # looked up once
        return found
    if name in ("DEFAULT_ARMS", "build_report", "load_run", "run"):
        from amnesia_bench import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
