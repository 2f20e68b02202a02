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
