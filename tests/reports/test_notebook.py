"""notebooks/results.ipynb runs top to bottom against a small run and rebuilds the figures and tables."""

from __future__ import annotations

from pathlib import Path

import nbformat

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "results.ipynb"


def test_the_documented_command_executes_the_notebook(write_run, tmp_path):
    """docs/reports.md's command, run as written from a repository root: its relative `AMNESIA_RUN` and
    `AMNESIA_FIGURES` are read from there, although Jupyter starts the kernel in notebooks/. The root is a
    copy in tmp_path (the notebook, and a fixture run at the documented run path), so the real repository's
    runs/ and docs/ are never touched; it needs nothing beyond `pip install -e '.[dev]'`. `--inplace` (the
    copy's outputs saved) is the one addition, so that the printed tables can be read back."""
    import os
    import re
    import shlex
    import shutil
    import subprocess

    root = NOTEBOOK.parents[1]
    docs = (root / "docs" / "reports.md").read_text(encoding="utf-8")
    match = re.search(r"`(AMNESIA_RUN=\S+ AMNESIA_FIGURES=\S+ jupyter execute [^`]+)`", docs)
    assert match, "docs/reports.md no longer documents the notebook command"
    *assignments, program, command, notebook = shlex.split(match[1])
    assert (program, command) == ("jupyter", "execute")
    variables = dict(assignment.split("=", 1) for assignment in assignments)
    assert not any(Path(value).is_absolute() for value in variables.values())
    (tmp_path / notebook).parent.mkdir(parents=True)
    shutil.copy(root / notebook, tmp_path / notebook)
    write_run(tmp_path / variables["AMNESIA_RUN"])
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, **variables, "AMNESIA_RESAMPLES": "100", "PYTHONPATH": path}
    result = subprocess.run(
        [program, command, "--inplace", notebook],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    executed = nbformat.read(tmp_path / notebook, as_version=4)
    outputs = "".join(o.get("text", "") for cell in executed.cells for o in cell.get("outputs", []))
    assert "On the harmful group" in outputs and "| arm | group |" in outputs
    figures = tmp_path / variables["AMNESIA_FIGURES"]
    assert (figures / "stale_error_by_arm_group.png").stat().st_size > 0
    assert (figures / "strength_timeline.svg").stat().st_size > 0
