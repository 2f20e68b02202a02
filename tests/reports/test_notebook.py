"""notebooks/results.ipynb runs top to bottom against a small run and rebuilds the figures."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "results.ipynb"


def test_notebook_rebuilds_figures_and_tables(write_run, tmp_path, monkeypatch):
    run = write_run(tmp_path / "run")
    figures = tmp_path / "figures"
    monkeypatch.setenv("AMNESIA_RUN", str(run))
    monkeypatch.setenv("AMNESIA_FIGURES", str(figures))
    monkeypatch.setenv("AMNESIA_RESAMPLES", "100")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))
    assert "On the harmful group" in outputs and "| arm | group |" in outputs
    assert (figures / "stale_error_by_arm_group.png").stat().st_size > 0
    assert (figures / "strength_timeline.svg").stat().st_size > 0


def test_the_documented_command_executes_the_notebook(write_run, tmp_path):
    """docs/reports.md's `jupyter execute` command, run as written (with the run and figure folders pointed at
    a fixture), rebuilds the figures: it needs nothing beyond `pip install -e '.[dev]'`."""
    import os
    import re
    import shlex
    import subprocess

    root = NOTEBOOK.parents[1]
    docs = (root / "docs" / "reports.md").read_text(encoding="utf-8")
    match = re.search(r"`AMNESIA_RUN=\S+ AMNESIA_FIGURES=\S+ (jupyter execute [^`]+)`", docs)
    assert match, "docs/reports.md no longer documents the notebook command"
    figures = tmp_path / "figures"
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "AMNESIA_RUN": str(write_run(tmp_path / "run")), "AMNESIA_FIGURES": str(figures),
           "AMNESIA_RESAMPLES": "100", "PYTHONPATH": path}  # fmt: skip
    result = subprocess.run(
        shlex.split(match[1]), cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (figures / "stale_error_by_arm_group.png").stat().st_size > 0
