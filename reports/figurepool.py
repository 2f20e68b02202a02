"""A report's figures, drawn in forked worker processes while the parent computes the tables.

Most of a report's CPU time is matplotlib's: six figures, each laid out and rendered twice (PNG and SVG).
`FigurePool` forks its workers once the logs are read, so they inherit the loaded run (nothing big is
pickled); each imports matplotlib and draws the figures it is sent — those drawn from the logs alone at
once, the others as soon as the tables they show exist — while the parent computes tables and writes the
CSVs. A figure is drawn by one process with the same function and inputs as in a sequential build, so the
files are the same. Without fork (Windows), or with `workers=0`, figures are drawn in the calling process
when they are submitted.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from reports.logread import RunData

WORKERS = 2  # the six figures split into two nearly equal halves of drawing time


def _context_tokens(data: RunData, folder: Path, colors: dict) -> None:
    from reports import figures

    figures.context_tokens_over_time(data, folder, colors)


def _strength_timeline(data: RunData, folder: Path, colors: dict, arm: str, task: str) -> None:
    from reports import figures

    figures.strength_timeline(data, arm, task, folder)


def _stale_by_group(data: RunData, folder: Path, colors: dict, summary: Any) -> None:
    from reports import figures

    figures.stale_error_by_arm_group(summary, folder, colors)


def _success_vs_tokens(data: RunData, folder: Path, colors: dict, summary: Any) -> None:
    from reports import figures

    figures.success_vs_tokens(summary, folder, colors)


def _stale_vs_age(data: RunData, folder: Path, colors: dict, by_age: Any) -> None:
    from reports import figures

    figures.stale_error_vs_age(by_age, folder, colors)


def _tradeoff(data: RunData, folder: Path, colors: dict, summary: Any) -> None:
    from reports.tradeoff import tradeoff_figure, tradeoff_points

    tradeoff_figure(tradeoff_points({"run": summary}), folder, colors)


# figure name -> function(data, folder, colors, *arguments) that writes folder/<name>.png and .svg
DRAW: dict[str, Callable[..., None]] = {
    "stale_error_by_arm_group": _stale_by_group,
    "context_tokens_over_time": _context_tokens,
    "success_vs_tokens": _success_vs_tokens,
    "stale_error_vs_age": _stale_vs_age,
    "tradeoff": _tradeoff,
    "strength_timeline": _strength_timeline,
}


def choose_timeline_task(data: RunData, arm: str) -> str | None:
    """The task that shows decay best for `arm`: most items forgotten by decay or expiry (not by an agent
    ending or an explicit forget), then the most writes and forgets, preferring the harmful group."""
    memory = data.memory[(data.memory["arm"] == arm) & data.memory["event"].isin(["write", "forget"])]
    if memory.empty:
        return None
    counts = (
        memory.assign(decayed=memory["reason"].isin(["stale", "expired"]))
        .groupby(["task_id", "group"])
        .agg(decayed=("decayed", "sum"), n=("event", "size"))
        .reset_index()
    )
    counts["harmful"] = counts["group"] == "harmful"
    order = counts.sort_values(
        ["decayed", "harmful", "n", "task_id"], ascending=[False, False, False, True], kind="stable"
    )
    return str(order.iloc[0]["task_id"])


class _Drawer:
    """Draws figures of one run into one folder (the arm colours worked out on first use)."""

    def __init__(self, data: RunData, folder: Path) -> None:
        self.data = data
        self.folder = folder
        self._colors: dict | None = None

    def draw(self, name: str, arguments: tuple[Any, ...]) -> None:
        if self._colors is None:
            from reports.figures import arm_colors

            self._colors = arm_colors(self.data.arms)
        DRAW[name](self.data, self.folder, self._colors, *arguments)


def _serve(connection: Connection, data: RunData, folder: Path) -> None:
    """A worker: import matplotlib, then draw each (name, arguments) received, answering "ok" or the
    error, until None or the parent goes away."""
    drawer = _Drawer(data, folder)
    try:
        import reports.figures  # noqa: F401  (the slow import, done while the parent still computes)

        while (job := connection.recv()) is not None:
            drawer.draw(*job)
            connection.send(("ok", job[0]))
    except EOFError:  # the parent stopped (it failed, or was interrupted): nothing to answer
        return
    except BaseException as error:  # every failure goes back to the parent, which raises it
        connection.send(("error", _portable(error), traceback.format_exc()))


def _portable(error: BaseException) -> BaseException:
    """`error` if it survives pickling (the parent re-raises it as is), else a RuntimeError saying it."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:  # whatever fails to pickle: send a description instead
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error


def _fork_context() -> Any:
    """multiprocessing's fork context where the platform has fork, else None."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")


class FigurePool:
    """Figures of one run drawn by `workers` forked processes (see the module docstring). Use as a context
    manager: `submit` figures, then `wait`; leaving the block stops the workers in any case."""

    def __init__(self, data: RunData, folder: Path, workers: int = WORKERS) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._drawer = _Drawer(data, folder)
        self._connections: list[Connection] = []
        self._processes: list[Any] = []
        self._pending: list[list[str]] = []
        context = _fork_context() if workers > 0 else None
        for _ in range(workers if context is not None else 0):
            ours, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(theirs, data, folder), daemon=True)
            process.start()
            theirs.close()
            self._connections.append(ours)
            self._processes.append(process)
            self._pending.append([])

    def __enter__(self) -> FigurePool:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        self.close(abort=kind is not None)

    def submit(self, worker: int, name: str, *arguments: Any) -> None:
        """Draw figure `name` (a key of DRAW) with `arguments` in worker `worker` (modulo the number of
        workers), or here and now when there are none."""
        if not self._connections:
            self._drawer.draw(name, arguments)
            return
        index = worker % len(self._connections)
        self._connections[index].send((name, arguments))
        self._pending[index].append(name)

    def wait(self) -> None:
        """Block until every submitted figure is written; re-raise the first worker error."""
        workers = zip(self._connections, self._pending, self._processes, strict=True)
        for connection, pending, process in workers:
            while pending:
                try:
                    reply = connection.recv()
                except EOFError:
                    raise RuntimeError(
                        f"figure worker exited (code {process.exitcode}) before drawing {pending[0]}"
                    ) from None
                if reply[0] == "error":
                    raise reply[1] from RuntimeError(f"in the figure worker:\n{reply[2]}")
                pending.pop(0)

    def close(self, abort: bool = False) -> None:
        """Stop the workers: each exits on the None sent here once its figures are drawn, or at once when
        `abort` (the report failed: its folder is thrown away)."""
        for connection, process in zip(self._connections, self._processes, strict=True):
            if abort:
                process.terminate()
            else:
                with contextlib.suppress(OSError):  # the worker is gone already
                    connection.send(None)
            process.join()
            connection.close()
        self._connections, self._processes, self._pending = [], [], []
