"""`build_report` draws its figures in forked workers beside the tables: the folder is the same, byte for
byte, as when everything is drawn in one process, a rebuild gives the same bytes, a worker's error fails
the report with nothing written, and `report` says which phase is done unless `--no-progress`."""

from __future__ import annotations

import filecmp

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from amnesia_bench.cli import app
from reports import figureinputs, figurepool
from reports.build import build_report
from tasks.errors import ReportInputError


def _files(folder):
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())


def test_workers_change_nothing_in_the_report_and_rebuilds_are_byte_identical(write_run, tmp_path):
    run = write_run(tmp_path / "run")
    folders = [
        build_report(run, out=tmp_path / "alone", resamples=200, workers=0),
        build_report(run, out=tmp_path / "pool", resamples=200, workers=2),
        build_report(run, out=tmp_path / "again", resamples=200, workers=2),
        build_report(run, out=tmp_path / "given", resamples=200, pool=figurepool.FigurePool()),  # as the CLI
    ]
    names = _files(folders[0])
    assert any(p.suffix == ".svg" for p in names) and any(p.suffix == ".png" for p in names)
    for other in folders[1:]:
        assert _files(other) == names
        _, mismatch, errors = filecmp.cmpfiles(folders[0], other, [str(p) for p in names], shallow=False)
        assert mismatch == [] and errors == []


def test_tables_are_the_same_from_the_report_columns_without_task_specs(write_run, tmp_path):
    """The report's way, the frames read with REPORT_COLUMNS only (no injected block, no item content: the
    stale counts are worked out pair by pair as the logs are read) and no task specs kept, gives every table
    as the whole frames do."""
    import pandas as pd

    from reports.build import tables_of
    from reports.logread import REPORT_COLUMNS, load_runs

    runs = [write_run(tmp_path / "run"), write_run(tmp_path / "seed1", seed=1)]
    kept, released = load_runs(runs), load_runs(runs, REPORT_COLUMNS, specs=False)
    for family, columns in REPORT_COLUMNS.items():
        assert list(getattr(released, family).columns) == [
            name for name in getattr(kept, family).columns if name in columns
        ]
    expected = tables_of(kept, resamples=200)
    found = tables_of(released, resamples=200)
    assert len(kept.task_specs) == 4 and not released.task_specs
    assert "block" not in released.injections and "content" not in released.memory
    assert "block" in kept.injections and "content" in kept.memory
    for name in ("summary", "categories", "per_task", "stale_by_age", "evidence", "free_text", "mechanisms"):
        pd.testing.assert_frame_equal(getattr(found, name), getattr(expected, name))
    pd.testing.assert_frame_equal(found.paired(), expected.paired())
    assert pd.Series(found.benefit).equals(pd.Series(expected.benefit))  # NaN where there is no interval


def test_the_strength_timeline_reads_its_pair_again_as_the_whole_memory_frame_has_it(write_run, tmp_path):
    """`timeline_of` on the report's narrow frames: the pair's memory records read again from its log, of
    the first run that has some, are the whole memory frame's rows of that pair (the figure's columns)."""
    import pandas as pd

    from reports.logread import REPORT_COLUMNS, load_runs
    from tasks.logschema import SUMMARY_COLUMNS

    runs = [write_run(tmp_path / "run"), write_run(tmp_path / "seed1", seed=1)]
    whole, narrow = load_runs(runs), load_runs(runs, REPORT_COLUMNS)
    memory = whole.memory
    for arm, task_id in sorted(set(zip(whole.tasks["arm"], whole.tasks["task_id"], strict=True))):
        timeline = figureinputs.timeline_of(narrow, arm, task_id)
        rows = memory[(memory["arm"] == arm) & (memory["task_id"] == task_id)]
        rows = rows[rows["run"] == rows["run"].min()].sort_values("sim_time", kind="stable")
        columns = list(SUMMARY_COLUMNS["memory"])
        found = timeline.events[columns].reset_index(drop=True)
        expected = rows[columns].reset_index(drop=True).astype(found.dtypes.to_dict())
        pd.testing.assert_frame_equal(found, expected, check_index_type=False)
        assert len(found) == len(rows) and timeline.horizon > 0


def _points():
    import pandas as pd

    return pd.DataFrame([{"group": "all", "arm": "a"} | dict.fromkeys(_TRADEOFF_COLUMNS, 0.5)])


_TRADEOFF_COLUMNS = [
    f"{rate}{end}" for rate in ("false_forgetting_rate", "stale_error_rate") for end in ("", "_lo", "_hi")
]


def test_logs_read_by_the_reader_are_the_logs_read_here(write_run, tmp_path):
    """`FigurePool(read=runs).logs(runs)` (the CLI's way: read while the report imports pandas) is
    `load_runs(runs, REPORT_COLUMNS, specs=False)`; asked for other run folders, the pool reads them here, and
    its figures still draw."""
    import pandas as pd

    from reports.logread import REPORT_COLUMNS, load_runs

    runs = [write_run(tmp_path / "run"), write_run(tmp_path / "seed1", seed=1)]
    here = load_runs(runs, REPORT_COLUMNS, specs=False)
    for asked in (runs, runs[:1]):
        with figurepool.FigurePool(read=runs) as pool:
            there = pool.logs(asked)
            pool.submit("tradeoff", tmp_path / f"figures{len(asked)}", ["a"], _points())
            pool.wait()
        expected = here if asked == runs else load_runs(asked, REPORT_COLUMNS, specs=False)
        for name in ("tasks", "calls", "injections", "probes", "memory"):
            pd.testing.assert_frame_equal(getattr(there, name), getattr(expected, name))
        assert (
            dict(there.task_specs) == dict(expected.task_specs) and there.arm_configs == expected.arm_configs
        )
        assert (tmp_path / f"figures{len(asked)}" / "tradeoff.png").exists()


@pytest.mark.parametrize(("allowance", "read_here"), [(0, False), (-1, True)])
def test_the_reader_reads_runs_up_to_a_size_and_the_report_reads_bigger_ones(
    write_run, tmp_path, monkeypatch, allowance, read_here
):
    """Above WORKER_READS_UP_TO pairs (as the manifests announce them) the logs are read by the report's
    own process, not twice in memory across a pipe; the RunData is the same either way."""
    import os

    import pandas as pd

    from reports import logread

    runs = [write_run(tmp_path / "run"), write_run(tmp_path / "seed1", seed=1)]
    expected = logread.load_runs(runs, logread.REPORT_COLUMNS)
    pairs = figurepool._announced_pairs(runs)
    assert pairs == len(expected.tasks)
    monkeypatch.setattr(figurepool, "WORKER_READS_UP_TO", pairs + allowance)
    readers: list[int] = []  # the processes that read, as this process sees them (a worker's list is its own)
    read_runs = logread.read_runs
    monkeypatch.setattr(
        logread,
        "read_runs",
        lambda run_dirs, columns=None, specs=True: (
            readers.append(os.getpid()) or read_runs(run_dirs, columns, specs)
        ),
    )
    with figurepool.FigurePool(read=runs) as pool:
        data = pool.logs(runs)
    assert readers == ([os.getpid()] if read_here else [])
    for name in ("tasks", "calls", "injections", "probes", "memory"):
        pd.testing.assert_frame_equal(getattr(data, name), getattr(expected, name))


def test_a_log_the_reader_cannot_read_fails_as_if_read_here(write_run, tmp_path):
    run = write_run(tmp_path / "run")
    log = next((run / "logs").rglob("*.jsonl"))
    log.write_text(log.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    with pytest.raises(ReportInputError) as here:
        build_report(run, out=tmp_path / "report", workers=0)
    with pytest.raises(ReportInputError) as there, figurepool.FigurePool(read=[run]) as pool:
        build_report(run, out=tmp_path / "report", pool=pool)
    assert str(there.value) == str(here.value) and "corrupt record" in str(here.value)
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_figure_workers_fork_when_the_logs_are_asked_for_and_inherit_what_was_imported_before(
    write_run, tmp_path, monkeypatch
):
    """With `read`, the figure workers are forked when the report asks for the logs (it has imported pandas
    by then), not when the pool is made: a module imported in between is in the workers' sys.modules. Two
    figures submitted together are drawn by both workers at once (each draw waits for the other's)."""
    import importlib
    import multiprocessing
    import os
    import sys

    run = write_run(tmp_path / "run")
    (tmp_path / "imported_after_the_pool.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "imported_after_the_pool", raising=False)
    both = multiprocessing.get_context("fork").Barrier(2, timeout=60)  # broken unless two workers draw

    def seen(folder, colors, *arguments):
        both.wait()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "seen.txt").write_text(f"{'imported_after_the_pool' in sys.modules} {os.getpid()}", "utf-8")

    monkeypatch.setitem(figurepool.DRAW, "tradeoff", seen)
    with figurepool.FigurePool(read=[run]) as pool:
        importlib.import_module("imported_after_the_pool")
        pool.logs([run])
        for figure in (0, 1):
            pool.submit("tradeoff", tmp_path / f"figures{figure}", ["a"])
        pool.wait()
    seen_by = [(tmp_path / f"figures{f}" / "seen.txt").read_text(encoding="utf-8").split() for f in (0, 1)]
    assert [imported for imported, _ in seen_by] == ["True"] * 2
    assert len({pid for _, pid in seen_by} | {str(os.getpid())}) == 3  # two workers, neither this process


def test_start_forks_the_figure_workers_before_the_logs_are_asked_for(write_run, tmp_path, monkeypatch):
    """`start` (what `amnesia-bench report` calls once pandas is imported) forks the workers then: they have
    what was imported before it, not what the caller imports after."""
    import importlib
    import sys

    run = write_run(tmp_path / "run")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("before_start", "after_start"):
        (tmp_path / f"{name}.py").write_text("", encoding="utf-8")
        monkeypatch.delitem(sys.modules, name, raising=False)

    def seen(folder, colors, *arguments):
        folder.mkdir(parents=True, exist_ok=True)
        found = [name in sys.modules for name in ("before_start", "after_start")]
        (folder / "seen.txt").write_text(str(found), encoding="utf-8")

    monkeypatch.setitem(figurepool.DRAW, "tradeoff", seen)
    with figurepool.FigurePool(read=[run]) as pool:
        importlib.import_module("before_start")
        pool.start()
        importlib.import_module("after_start")
        pool.logs([run])
        pool.submit("tradeoff", tmp_path / "figures", ["a"])
        pool.wait()
    assert (tmp_path / "figures" / "seen.txt").read_text(encoding="utf-8") == "[True, False]"


@pytest.mark.parametrize(
    ("workers", "figure"),
    [(0, "tradeoff"), (2, "success_vs_tokens"), (2, "tradeoff")],  # drawn by the first / the second worker
)
def test_a_figure_that_fails_fails_the_report_and_leaves_no_folder(
    write_run, tmp_path, monkeypatch, workers, figure
):
    run = write_run(tmp_path / "run")

    def broken(*args):
        raise ReportInputError(f"{figure}: broken on purpose")

    monkeypatch.setitem(figurepool.DRAW, figure, broken)  # forked workers inherit the patch
    with pytest.raises(ReportInputError, match="broken on purpose"):
        build_report(run, out=tmp_path / "report", resamples=100, workers=workers)
    assert not (tmp_path / "report").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no staging folder left behind either


def test_report_prints_its_phases_on_stderr_unless_no_progress(write_run, tmp_path):
    run = write_run(tmp_path / "run")
    runner = CliRunner()
    loud = runner.invoke(app, ["report", str(run), "--resamples", "100", "--figures"])
    assert loud.exit_code == 0, loud.output
    phases = [line.split(" (")[0] for line in loud.stderr.splitlines()]
    assert phases == [
        "report: read 12 session logs",
        "report: tables computed",
        "report: tables and report.md written",
        "report: figures drawn",
    ]
    bare = runner.invoke(
        app, ["report", str(run), "--out", str(tmp_path / "bare"), "--resamples", "100", "--no-figures"]
    )
    assert bare.exit_code == 0, bare.output
    assert bare.stderr.splitlines()[-1].startswith("report: done (no figures)")
    assert not (tmp_path / "bare" / "figures").exists()
    text = (tmp_path / "bare" / "report.md").read_text(encoding="utf-8")
    assert "built with `--no-figures`" in text and "](figures/" not in text
    drawn = (run / "report" / "report.md").read_text(encoding="utf-8")
    tables = ["summary.csv", "per_task.csv", "paired.csv", "stale_by_age.csv"]
    assert all(
        (tmp_path / "bare" / name).read_bytes() == (run / "report" / name).read_bytes() for name in tables
    )
    assert text.split("## Figures")[0] == drawn.split("## Figures")[0]  # the tables are the drawn report's
    bad = runner.invoke(app, ["report", str(tmp_path / "nowhere")])  # bad input: the error line alone
    assert bad.exit_code == 2 and bad.stderr.startswith("error: ") and "report:" not in bad.stderr
    quiet = runner.invoke(app, ["report", str(run), "--resamples", "100", "--no-progress"])
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert quiet.stdout.startswith("report written to")


def test_the_loaded_tasks_are_the_tasks_the_logs_started_with(write_run, tmp_path):
    import json

    from reports.logread import load_runs

    run = write_run(tmp_path / "run")
    specs = load_runs([run]).task_specs
    logged = {}
    for path in sorted((run / "logs").rglob("*.jsonl")):
        task = json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])["task"]
        logged.setdefault(task["id"], task)
    assert dict(specs) == logged and list(specs) == list(logged) and len(specs) == 4
    assert specs["harmful/drink"] is not specs["harmful/drink"]  # a fresh dict each time: callers may edit it
    assert "no/such-task" not in specs


_OPTION_VALUES = st.one_of(
    st.none(), st.just(0), st.just(0.0), st.just(""), st.floats(0.01, 9), st.just("rank")
)


@settings(max_examples=200, deadline=None)
@given(
    options=st.dictionaries(st.sampled_from(figureinputs.DECAY_OPTIONS), _OPTION_VALUES),
    nested=st.booleans(),
)
def test_the_timelines_decay_options_are_the_arms_or_amnesias_defaults(options, nested):
    """decay_options imports amnesia.config only when a default is needed: each option is the plain
    `found or Config()'s`, whichever of the four the arm's configuration lists, falsy ones included."""
    from amnesia.config import Config

    config = {"arm": "x", "config": options} if nested else options
    defaults = Config()
    plain = {
        name: figureinputs._config_value(config, name) or getattr(defaults, name)
        for name in figureinputs.DECAY_OPTIONS
    }
    assert figureinputs.decay_options(config) == plain
