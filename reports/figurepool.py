"""A report's figures, drawn in forked worker processes while the parent reads the logs and computes the
tables.

Most of a report's CPU time is matplotlib's: six figures, each drawn twice (PNG and SVG), and the import of
matplotlib itself. Made with `read=RUN_DIRS` (`amnesia-bench report` makes it before it imports the report's
modules, so this module imports nothing heavy), the pool forks a reader process at once, which reads the logs
(`logread.read_runs`, no pandas needed) while the parent imports pandas and the report's modules, and sends
them back in plain columns (`FigurePool.logs`), pickled straight into a pipe of their own (never whole in
memory as bytes on either side). The figure workers are forked once the parent has imported numpy and pandas
and before it holds the logs (`amnesia-bench report` calls `start` before it imports the report's modules;
else when the parent asks for the logs or submits a figure): the first inherits those imports, imports
matplotlib while the parent imports the rest and the logs come in, and forks the other workers, which
inherit it too.
Without `read`, the workers are forked when the pool is made.
Each figure is sent with the few rows it shows (pickled: a slim frame or a table, never the run), the figures
of the logs as soon as the logs are read and the others as soon as their tables exist, while the parent goes
on with the rest of the tables and the CSVs; each figure goes to the first worker free, in the order
submitted. A figure is drawn by one process with the same function and
inputs as in a sequential build, so the files are the same. Without fork (Windows), or with `workers=0`,
figures are drawn in the calling process when they are submitted.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import queue
import signal
import threading
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tasks.errors import ReportInputError

if TYPE_CHECKING:  # not imported here: the pool is made before the report's slow imports (pandas, scipy)
    import pandas as pd

    from reports.figureinputs import Timeline
    from reports.logread import RunData

WORKERS = 2  # one a core: the parent computes the tables on one, the figures share both with it
# The first worker reads the logs of runs up to this many (arm, task) pairs; the report reads bigger ones
# itself. Reading in the worker gains the report's import time (about a second), and costs the transfer
# (about 0.04 ms a pair) and, while it lasts, the logs held twice: at 10^5 tasks x 3 arms, 13 s and 1.5 GB
# more at the peak, over issue 15's 2 GB.
WORKER_READS_UP_TO = 20_000


def _announced_pairs(run_dirs: Sequence[Path | str]) -> int:
    """The (arm, task) pairs the runs' manifests announce (tasks x arms; a folder of run folders counts its
    run folders, as the reader expands them); 0 when a manifest cannot be read (whoever reads the logs reports
    it)."""
    from reports.logread import expand_run_dirs, read_manifest  # light: no pandas or numpy

    total = 0
    for run_dir in expand_run_dirs(run_dirs):
        try:
            manifest = read_manifest(run_dir)
            total += int(manifest["tasks"]["count"]) * len(manifest["arms"])
        except (ReportInputError, OSError, ValueError, TypeError, KeyError):
            return 0
    return total


def _context_tokens(
    folder: Path, styles: dict, style: Any, calls: pd.DataFrame, tasks_per_arm: pd.Series
) -> None:
    from reports import figures

    figures.context_tokens_over_time(calls, tasks_per_arm, folder, styles, style)


def _strength_timeline(folder: Path, styles: dict, style: Any, timeline: Timeline) -> None:
    from reports import figures

    figures.strength_timeline(timeline, folder, style)


def _stale_by_group(folder: Path, styles: dict, style: Any, summary: Any) -> None:
    from reports import figures

    figures.stale_error_by_arm_group(summary, folder, styles, style)


def _success_vs_tokens(folder: Path, styles: dict, style: Any, summary: Any) -> None:
    from reports import figures

    figures.success_vs_tokens(summary, folder, styles, style)


def _stale_vs_age(folder: Path, styles: dict, style: Any, by_age: Any) -> None:
    from reports import figures

    figures.stale_error_vs_age(by_age, folder, styles, style)


def _tradeoff(folder: Path, styles: dict, style: Any, summary: Any) -> None:
    from reports.tradeoff import tradeoff_figure, tradeoff_points

    tradeoff_figure(tradeoff_points({"run": summary}), folder, styles, style=style)


# figure name -> function(folder, arm styles, figure style, *arguments) writing folder/<name>.png and .svg
DRAW: dict[str, Callable[..., None]] = {
    "stale_error_by_arm_group": _stale_by_group,
    "context_tokens_over_time": _context_tokens,
    "success_vs_tokens": _success_vs_tokens,
    "stale_error_vs_age": _stale_vs_age,
    "tradeoff": _tradeoff,
    "strength_timeline": _strength_timeline,
}


def draw(name: str, folder: Path, arms: list[str], style: str, arguments: tuple[Any, ...]) -> None:
    """Draw figure `name` (a key of DRAW) into `folder` in figure style `style` (a key of figures.STYLES),
    its arms in the order of `arms` and styled by their position there."""
    from reports.figures import STYLES, arm_styles, lettered

    with lettered(STYLES[style]):
        DRAW[name](folder, arm_styles(arms), STYLES[style], *arguments)


def _serve(connection: Connection) -> None:
    """Draw each (name, folder, arms, arguments) received, answering "ok" or the error, until None or the
    parent goes away."""
    try:
        while (job := connection.recv()) is not None:
            draw(*job)
            connection.send(("ok", job[0]))
    except EOFError:  # the parent stopped (it failed, or was interrupted): nothing to answer
        return
    except BaseException as error:  # every failure goes back to the parent, which raises it
        connection.send(("error", _portable(error), traceback.format_exc()))


def _read_into(run_dirs: list[Path], pipe: int, parent_end: int) -> None:
    """The reader process: read the runs' logs (the columns a report reads, REPORT_COLUMNS) and pickle them
    ("logs", RunLogs) into the file descriptor `pipe` as they are pickled, or the failure ("error", ...);
    `parent_end`: the parent's end of the pipe."""
    from reports.logread import REPORT_COLUMNS, read_runs

    os.close(parent_end)
    try:
        message: tuple[Any, ...] = ("logs", read_runs(run_dirs, REPORT_COLUMNS, specs=False))
    except BaseException as error:  # bad input included: the parent raises it, as if it had read the logs
        message = ("error", _portable(error), traceback.format_exc())
    with contextlib.suppress(OSError), os.fdopen(pipe, "wb") as stream:  # OSError: the parent left
        pickle.dump(message, stream, protocol=pickle.HIGHEST_PROTOCOL)


def _first_worker(connections: list[Connection], parent_ends: list[Connection], logs: int | None) -> None:
    """The first worker: import matplotlib (numpy and pandas come with the fork), fork the other workers
    (they inherit the import), serve `connections[0]`, and wait for the others to end. `logs`: the parent's
    end of the pipe the logs come through, if open (closed here: only the parent may hold it). Terminated
    (the report failed), it kills the others first, so that none writes into a folder being removed."""
    for end in parent_ends:  # a worker must see EOF when the parent is gone: hold none of its ends
        end.close()
    if logs is not None:
        os.close(logs)
    # The slow import, with what saving the first figure would import (the backends, 0.04 s more): once
    # here for every worker
    import matplotlib.backends.backend_agg
    import matplotlib.backends.backend_svg  # noqa: F401

    import reports.figures
    import reports.tradeoff  # noqa: F401

    # What the imports made lives to the end: frozen, the collections here and in the other workers skip
    # it. Drawing makes reference cycles (a figure, its axes and artists), collected whatever the
    # collector's state in the process that forked us (`amnesia-bench report` imports with it off).
    gc.freeze()
    gc.enable()
    children: list[int] = []

    def stop(signum: int, frame: Any) -> None:
        for child in children:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
        os._exit(1)

    signal.signal(signal.SIGTERM, stop)
    # SIGTERM held while forking: it is handled once every child is in `children`, so none outlives us
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    for index, connection in enumerate(connections[1:], start=1):
        pid = os.fork()
        if pid == 0:  # a further worker: serve its own connection only, then leave without cleanup
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            for other, unused in enumerate(connections):
                if other != index:
                    unused.close()
            code = 0
            try:
                _serve(connection)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        children.append(pid)
        connection.close()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    try:
        _serve(connections[0])
    finally:
        for child in children:
            with contextlib.suppress(OSError):
                os.waitpid(child, 0)


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


Job = tuple[str, bytes]  # a figure's name and its pickled (name, folder, arms, arguments)
Replies = queue.SimpleQueue[tuple[Any, ...]]  # ("ok", name), ("error", error, traceback) or ("gone", name)


class _Courier:
    """Carries the pool's jobs to one worker, one at a time, in a thread of its own: it takes the next job
    from the queue all couriers share once its worker has answered the last, so whichever worker is free
    draws the next figure (the figures of the tables come at once, and split themselves between the workers
    by drawing time). A job's pickle (the cumulative-context figure sends every model call) is larger than a
    pipe's buffer, and the worker reads it only once it has imported matplotlib: written by the caller, the
    report would wait there (most of a second on 2 cores) instead of computing its tables."""

    def __init__(self, connection: Connection, jobs: queue.SimpleQueue[Job | None], replies: Replies) -> None:
        self._thread = threading.Thread(target=self._carry, args=(connection, jobs, replies), daemon=True)
        self._thread.start()

    @staticmethod
    def _carry(connection: Connection, jobs: queue.SimpleQueue[Job | None], replies: Replies) -> None:
        """Send each job and put the worker's reply into `replies`, until None (sent on: the worker exits)
        or the worker is gone (("gone", name) put instead: `FigurePool.wait` raises it)."""
        while (job := jobs.get()) is not None:
            name, pickled = job
            try:
                connection.send_bytes(pickled)
                replies.put(connection.recv())
            except (OSError, EOFError):  # the worker is gone: the next courier may take the other jobs
                replies.put(("gone", name))
                return
        with contextlib.suppress(OSError):
            connection.send(None)

    def join(self) -> None:
        """Wait until the thread has ended (its None taken, or its worker gone)."""
        self._thread.join()


class FigurePool:
    """Figures drawn by `workers` forked processes (see the module docstring). Use as a context manager:
    `submit` figures, then `wait`; leaving the block stops the workers in any case."""

    def __init__(
        self, workers: int = WORKERS, read: Sequence[Path | str] | None = None, style: str = "report"
    ) -> None:
        """`style`: the figure style every figure is drawn in (a key of figures.STYLES). `read`: run folders
        whose logs a reader process reads from now on, for `logs` (when they hold at most WORKER_READS_UP_TO
        pairs; `logs` reads bigger runs itself). Without `read` the workers are
        forked now; with it, by `start`, or when the logs are asked for or the first figure is submitted: the
        caller has imported pandas by then, and the workers inherit it."""
        self._connections: list[Connection] = []
        self._couriers: list[_Courier] = []  # one a connection: carries the jobs to its worker
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()  # for the first worker free
        self._replies: Replies = queue.SimpleQueue()  # the workers' answers, in the order they come
        self._submitted = 0  # jobs whose reply `wait` has not taken yet
        self._process: Any = None  # the first figure worker
        self._reader: Any = None  # the process reading the logs
        self._reading: list[Path] | None = None  # the run folders being read by the reader
        self._logs: int | None = None  # the read end of the pipe the logs come through
        self._workers = workers
        self.style = style
        self._context = _fork_context() if workers > 0 else None
        if self._context is None:
            return
        if read is None:
            self.start()
        elif _announced_pairs(read) <= WORKER_READS_UP_TO:
            self._reading = [Path(run_dir) for run_dir in read]
            self._logs, pipe = os.pipe()
            arguments = (self._reading, pipe, self._logs)
            self._reader = self._context.Process(target=_read_into, args=arguments, daemon=True)
            self._reader.start()
            os.close(pipe)

    def start(self) -> None:
        """Fork the figure workers, unless they are running (or cannot be: no fork, or `workers=0`). With
        `read`, the pool calls it when the logs are asked for or a figure is submitted; a caller that has
        imported pandas and still has other modules to import calls it earlier, so that the first worker
        imports matplotlib meanwhile."""
        if self._context is None or self._process is not None:
            return
        pipes = [self._context.Pipe() for _ in range(self._workers)]
        self._connections = [ours for ours, _ in pipes]
        theirs = [end for _, end in pipes]
        arguments = (theirs, self._connections, self._logs)
        self._process = self._context.Process(target=_first_worker, args=arguments, daemon=True)
        self._process.start()
        for end in theirs:
            end.close()
        self._couriers = [_Courier(connection, self._jobs, self._replies) for connection in self._connections]

    def __enter__(self) -> FigurePool:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        self.close(abort=kind is not None)

    def logs(self, run_dirs: Sequence[Path | str]) -> RunData:
        """The runs as a report reads them (`logread.load_runs`: REPORT_COLUMNS, no specs): from the reader
        when it was made to read these run folders, else read here (ReportInputError on bad input either
        way)."""
        from reports.logread import REPORT_COLUMNS, load_runs, run_data

        self.start()  # matplotlib is imported while the logs are read (or taken)
        reading, self._reading = self._reading, None
        if self._logs is None or reading != [Path(run_dir) for run_dir in run_dirs]:
            self._drop_logs()  # read for nothing: the reader's write fails, and it ends
            return load_runs(run_dirs, REPORT_COLUMNS, specs=False)
        pipe, self._logs = self._logs, None
        with os.fdopen(pipe, "rb") as stream:
            try:
                reply = pickle.load(stream)
            except (EOFError, pickle.UnpicklingError):  # cut short: the reader died
                raise RuntimeError("the log reader exited before sending the logs it read") from None
        if reply[0] == "error":
            raise reply[1] from RuntimeError(f"in the log reader:\n{reply[2]}")
        return run_data(reply[1])

    def _drop_logs(self) -> None:
        """Close the pipe of logs not taken (so that the reader writing them does not wait for ever)."""
        if self._logs is not None:
            os.close(self._logs)
            self._logs = self._reading = None

    def submit(self, name: str, folder: Path, arms: list[str], *arguments: Any) -> None:
        """Draw figure `name` (a key of DRAW) with `arguments` into `folder` in the first worker free (in the
        order submitted), or here and now when there are none; `arms` gives the arms' order and styles."""
        self._drop_logs()
        self.start()
        if not self._connections:
            draw(name, folder, arms, self.style, arguments)
            return
        # pickled here and now: what it holds may change once we return
        job = (name, folder, arms, self.style, arguments)
        self._jobs.put((name, pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)))
        self._submitted += 1

    def wait(self) -> None:
        """Block until every submitted figure is written; re-raise the first worker error."""
        self._drop_logs()
        while self._submitted:
            reply = self._replies.get()
            self._submitted -= 1
            if reply[0] == "gone":
                raise RuntimeError(f"a figure worker exited before drawing {reply[1]}")
            if reply[0] == "error":
                raise reply[1] from RuntimeError(f"in the figure worker:\n{reply[2]}")

    def close(self, abort: bool = False) -> None:
        """Stop the workers: each exits on the None sent here once its figures are drawn, or at once when
        `abort` (the report failed: its folder is thrown away)."""
        self._drop_logs()
        if self._reader is not None:
            if abort:
                self._reader.terminate()
            self._reader.join()  # it has sent the logs, or failed to (they were not taken)
            self._reader = None
        if self._process is None:
            return
        if abort:
            self._process.terminate()  # the first worker kills the others before it exits
        for _ in self._couriers:
            self._jobs.put(None)  # after the figures (drawn first unless the workers were stopped)
        for courier in self._couriers:
            courier.join()  # its None sent, or its worker gone
        self._process.join()
        for connection in self._connections:
            connection.close()
        self._connections, self._couriers, self._process = [], [], None
        self._jobs, self._replies, self._submitted = queue.SimpleQueue(), queue.SimpleQueue(), 0
