"""Where a run's (arm, task) pairs are replayed, and how many model calls are kept in flight meanwhile.

- `processes` (the default): in this process (`--workers 1`) or in a pool of spawned worker processes.
- `dask` / `dask=ADDRESS`: on a Dask distributed cluster — a `LocalCluster` of `--workers` processes when no
  address is given — as batches of pairs (`pip install 'dsh-memory-forget[dask]'`; the workers need this
  package and the model's environment variables, e.g. `OPENAI_BASE_URL`).

Inside each process, a model that says how many calls it may have in flight (`max_in_flight`: the OpenAI
adapter's `--max-connections`) gets that many pairs replayed at once on threads, each pair blocking on its own
calls; `--max-connections K` is the number of requests in flight per run, split evenly over the processes.
Every pair is independent (its own arm, clock, seed and log file), so none of this changes a log: only the
order in which pairs finish.

Shards (`--shard i/N`, for batch arrays): a pair belongs to shard `shard_of(arm, task id, N)`, a stable hash,
so every machine agrees on the split without talking to the others.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.synchronize import Event as EventType

from runners.models import resolve_model
from runners.models.cache import CachedModel
from runners.replay import PairJob, replay_pair
from tasks.errors import RunError
from tasks.modelapi import Model

BATCH_PAIRS = 16  # pairs per worker job: amortises inter-process overhead, keeps progress smooth
EXECUTORS = ("processes", "dask")


@dataclass(frozen=True)
class Counts:
    """What a batch of pairs did, summed over the batches of a run."""

    calls: int = 0
    probes: int = 0
    cache_hits: int = 0
    cache_misses: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.calls + other.calls,
            self.probes + other.probes,
            self.cache_hits + other.cache_hits,
            self.cache_misses + other.cache_misses,
        )


@dataclass(frozen=True)
class Executor:
    """`processes`, or `dask` with an optional scheduler address."""

    kind: str = "processes"
    address: str | None = None  # dask only; None: a LocalCluster for the run

    @classmethod
    def parse(cls, text: str) -> Executor:
        """`processes`, `dask` or `dask=ADDRESS` (e.g. `dask=tcp://10.0.0.5:8786`)."""
        kind, _, address = text.partition("=")
        kind = kind.strip()
        if kind not in EXECUTORS or (kind == "processes" and address):
            raise RunError(f"--executor: expected processes, dask or dask=ADDRESS, got {text!r}")
        if kind == "dask" and "=" in text and not address.strip():
            raise RunError("--executor: dask=ADDRESS needs an address, e.g. dask=tcp://127.0.0.1:8786")
        return cls(kind, address.strip() or None)

    def describe(self) -> str:
        """The `--executor` text that parses back to this."""
        return self.kind if self.address is None else f"{self.kind}={self.address}"


def parse_shard(text: str) -> tuple[int, int]:
    """`i/N` (0 <= i < N) as (i, N)."""
    index, slash, count = text.partition("/")
    try:
        shard = (int(index), int(count))
    except ValueError:
        shard = (-1, 0)
    if not slash or not 0 <= shard[0] < shard[1]:
        raise RunError(f"--shard: expected i/N with 0 <= i < N (e.g. 0/4), got {text!r}")
    return shard


def shard_of(arm: str, task_id: str, count: int) -> int:
    """The shard (0..count-1) of the pair (arm, task id): a stable hash, the same on every machine."""
    digest = hashlib.sha256(f"{arm}\x1f{task_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


_WORKER_MODELS: dict[str, Model] = {}
# In each worker process of a `WorkerPool`: set by the parent on Ctrl-C, when the worker starts no new pair.
_STOP: EventType | None = None


class WorkerPool(concurrent.futures.ProcessPoolExecutor):
    """`workers` spawned processes that leave Ctrl-C to the parent: they ignore SIGINT (a terminal sends it to
    the whole process group) and, once the parent sets `stop`, finish the pair in hand and start no other.

    Every worker is started at once, with SIGINT ignored while it starts (a started process keeps ignoring
    it), so that a Ctrl-C during a worker's start-up cannot kill it half-imported either."""

    def __init__(self, workers: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.stop = context.Event()
        super().__init__(workers, mp_context=context, initializer=_start_worker, initargs=(self.stop,))
        in_main_thread = threading.current_thread() is threading.main_thread()  # signal.signal's rule
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main_thread else None
        try:
            # A spawn pool starts a process per submitted job while none is idle: `workers` no-op jobs now.
            for _ in range(workers):
                self.submit(int)
        finally:
            if in_main_thread:
                signal.signal(signal.SIGINT, handler)

    def stop_workers(self) -> None:
        """Tell the workers to start no new pair, drop the queued batches and wait for the pairs in hand."""
        self.stop.set()
        self.shutdown(wait=True, cancel_futures=True)


def _start_worker(stop: EventType) -> None:
    global _STOP
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides (see WorkerPool)
    _STOP = stop


def _stopping() -> bool:
    return _STOP is not None and _STOP.is_set()


def _run_batch(model_spec: str, batch: list[PairJob], in_flight: int) -> Counts:
    """Worker entry point: replay a batch and say what it did."""
    model = _WORKER_MODELS.get(model_spec)
    if model is None:
        model = _WORKER_MODELS[model_spec] = resolve_model(model_spec)
    return replay_all(model, batch, in_flight)


def replay_all(model: Model, batch: list[PairJob], in_flight: int = 1) -> Counts:
    """Replay `batch` in this process, `in_flight` pairs at a time (threads)."""
    cache = model if isinstance(model, CachedModel) else None
    hits, misses = (cache.hits, cache.misses) if cache else (0, 0)
    calls = probes = 0
    for pair_calls, pair_probes in _replayed(model, batch, in_flight):
        calls, probes = calls + pair_calls, probes + pair_probes
    if cache:
        hits, misses = cache.hits - hits, cache.misses - misses
    return Counts(calls, probes, hits, misses)


def _replayed(model: Model, batch: list[PairJob], in_flight: int) -> Iterator[tuple[int, int]]:
    if in_flight <= 1 or len(batch) <= 1:
        for job in batch:
            if _stopping():
                return
            yield replay_pair(job, model)
        return
    with concurrent.futures.ThreadPoolExecutor(min(in_flight, len(batch))) as pool:
        futures = [pool.submit(_replay_unless_stopping, job, model) for job in batch]
        try:
            for future in concurrent.futures.as_completed(futures):
                yield future.result()
        except BaseException:
            for future in futures:  # pairs not started stay unfinished, for --resume
                future.cancel()
            raise


def _replay_unless_stopping(job: PairJob, model: Model) -> tuple[int, int]:
    """`replay_pair`, or nothing (0 calls, 0 probes: the pair stays unfinished) once the run is stopping."""
    return (0, 0) if _stopping() else replay_pair(job, model)


def _batches(jobs: list[PairJob], size: int) -> Iterator[list[PairJob]]:
    for start in range(0, len(jobs), size):
        yield jobs[start : start + size]


def model_in_flight(model: Model) -> int:
    """Calls the model may have in flight in one process (1 unless it says otherwise)."""
    return max(1, int(getattr(model, "max_in_flight", 1)))


def worker_pool(workers: int, executor: Executor) -> WorkerPool | None:
    """The run's pool of `workers` spawned processes (None: the pairs run in this process, or on Dask). The
    runner reads the task files through it too (tasks.load.read_task_set), then hands it to `execute`."""
    if executor.kind != "processes" or workers == 1:
        return None
    return WorkerPool(workers)


def execute(
    jobs: list[PairJob],
    model: Model,
    model_spec: str,
    *,
    workers: int,
    executor: Executor,
    done: Callable[[int], None],
    pool: WorkerPool | None,
) -> Counts:
    """Replay every job; `done(n)` hears each time n more pairs have finished. `pool`: the run's
    `worker_pool` (None: in this process, or on Dask); the caller shuts it down."""
    in_flight = model_in_flight(model)
    if executor.kind == "dask":
        return _on_dask(jobs, model_spec, workers, executor.address, in_flight, done)
    if pool is None:
        counts = Counts()
        # Batches as large as the calls in flight: each is replayed on that many threads.
        for batch in _batches(jobs, in_flight):
            counts += replay_all(model, batch, in_flight)
            done(len(batch))
        return counts
    per_worker = -(-in_flight // workers)
    futures = {
        pool.submit(_run_batch, model_spec, batch, per_worker): len(batch)
        for batch in _batches(jobs, max(BATCH_PAIRS, 2 * per_worker))
    }
    counts = Counts()
    try:
        for future in concurrent.futures.as_completed(futures):
            counts += future.result()
            done(futures[future])
    except BaseException:
        # Stop queued batches instead of finishing them, and let the workers finish the pair in hand (a
        # Ctrl-C then leaves every log complete or unfinished); unfinished pairs are redone by --resume.
        pool.stop_workers()
        raise
    return counts


def _on_dask(
    jobs: list[PairJob],
    model_spec: str,
    workers: int,
    address: str | None,
    in_flight: int,
    done: Callable[[int], None],
) -> Counts:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise RunError(
            "--executor dask: Dask is not installed; pip install 'dsh-memory-forget[dask]'"
        ) from None
    cluster = None if address else LocalCluster(n_workers=workers, threads_per_worker=1)
    try:
        with Client(address or cluster) as client:
            per_worker = -(-in_flight // max(1, len(client.scheduler_info()["workers"])))
            futures = {
                client.submit(_run_batch, model_spec, batch, per_worker, pure=False): len(batch)
                for batch in _batches(jobs, max(BATCH_PAIRS, 2 * per_worker))
            }
            counts = Counts()
            try:
                for future in as_completed(list(futures)):
                    counts += future.result()
                    done(futures[future])
            except BaseException:
                client.cancel(list(futures))
                raise
            return counts
    finally:
        if cluster is not None:
            cluster.close()
