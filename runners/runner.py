"""The replay runner: every (arm, task) pair of a run, in one process or in a pool of spawned workers, into a
run folder (`manifest.json`, `logs/<arm>/<task>.jsonl`, `work/` scratch space).

Resume: a pair is finished iff its log ends with `task_end`; `resume=True` skips finished pairs and replays
the others from scratch. Logs are identical whatever the number of workers, the executor (processes or Dask),
the calls in flight or the sharding, apart from `wall*` fields (runners.execute).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from tqdm import tqdm

from arms.base import time_rule_of
from runners.armconfig import ArmSpec, ineffective_options
from runners.execute import Executor, WorkerPool, execute, shard_of, worker_pool
from runners.judging import judge_description, judge_model
from runners.models import resolve_model
from runners.models.cache import CachedModel
from runners.replay import PairJob, derive_seed
from tasks.errors import FailedPair, PairsFailed, RunError, RunInterrupted
from tasks.fairness import fairness_summary, value_fates
from tasks.load import load_tasks, task_set_hash
from tasks.logschema import PairError, is_finished, last_record, log_filename, pair_error_cause
from tasks.modelapi import Model
from tasks.spec import Task

MANIFEST_FORMAT = 1
# Manifest fields that must match for --resume to continue a run rather than mix two different runs
# (task_ids before tasks, whose count it changes: the message names the cause).
_RESUME_KEYS = (
    "seed", "epoch", "model", "arms", "budget_tokens", "task_ids", "tasks", "groups", "limit", "limit_seed",
    "judge",
)  # fmt: skip
# What a manifest written before a key existed means by its absence.
_RESUME_DEFAULTS: dict[str, Any] = {"epoch": 0, "limit_seed": 0, "task_ids": [], "judge": None}
# What a run writes into its folder (report: the report step); logs first: they are cleared by `_clear_logs`.
_RUN_PARTS = ("logs", "work", "report")


@dataclass(frozen=True)
class RunOptions:
    tasks: Path
    arms: list[ArmSpec]
    model: str = "scripted"
    seed: int = 0
    out: Path = Path("runs/default")
    budget_tokens: int = 2000
    workers: int = 1
    limit: int | None = None  # a balanced, seeded sample of this many tasks (see select_tasks)
    groups: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()  # only these tasks (after `groups`; empty: every task)
    epoch: int = 0  # repetition of the same seed: folded into every pair's seed (0 = the plain seed)
    # seed of the --limit sample (not the run seed: every seed of a design gets the same tasks)
    limit_seed: int = 0
    resume: bool = False
    overwrite: bool = False  # a fresh run may replace the logs of an earlier run in `out`
    progress: bool = True
    argv: list[str] = field(default_factory=list)
    shard: tuple[int, int] | None = None  # (i, N): only the pairs of shard i of N (runners.execute.shard_of)
    executor: str = "processes"  # processes | dask | dask=ADDRESS (runners.execute.Executor)
    # (arm, run folder): that arm's finished logs are linked from the other run, whose run of the arm must be
    # this one's (the same seed, model, budget, tasks and arm config; checked), instead of being replayed
    shared_logs: tuple[tuple[str, Path], ...] = ()
    judge: str | None = None  # a model spec: a judge classifies each probe answer beside the rules


@dataclass(frozen=True)
class RunSummary:
    out: Path
    pairs: int
    skipped: int
    model_calls: int
    probes: int
    seconds: float
    cache_hits: int | None = None  # answers served by the response cache (None: the model has no cache)
    cache_misses: int | None = None  # calls the cache could not answer, made for real
    # the pairs that stopped on a failed model call or arm backend (their logs end with pair_error)
    failed: tuple[FailedPair, ...] = ()
    shared: int = 0  # finished logs linked from another run (`RunOptions.shared_logs`), counted in skipped


def select_tasks(tasks: list[Task], groups: tuple[str, ...], limit: int | None, seed: int = 0) -> list[Task]:
    """The tasks of `groups` (all when empty); with `limit`, a balanced sample of that many: groups take
    turns, within a group its categories take turns, and each category's tasks are drawn in a seeded random
    order. The sample keeps the task set's order."""
    chosen = [t for t in tasks if not groups or t.group in groups]
    if limit is None or limit >= len(chosen):
        return chosen
    rng = random.Random(seed)  # a local seeded generator: the sample is a function of (task set, seed)
    strata: dict[str, dict[str, list[Task]]] = {}
    for task in chosen:
        strata.setdefault(task.group, {}).setdefault(task.category, []).append(task)
    for categories in strata.values():
        for members in categories.values():
            rng.shuffle(members)
    turns = [_round_robin([strata[g][c] for c in sorted(strata[g])]) for g in sorted(strata)]
    picked: set[str] = set()
    while len(picked) < limit:
        for turn in turns:
            task = next(turn, None)
            if task is not None and len(picked) < limit:
                picked.add(task.id)
    return [t for t in chosen if t.id in picked]


def tasks_with_ids(tasks: list[Task], ids: tuple[str, ...]) -> list[Task]:
    """The tasks whose id is in `ids`, in the task set's order (all of them when `ids` is empty); an id that
    names no task is a RunError (one line)."""
    if not ids:
        return tasks
    known = {task.id for task in tasks}
    unknown = [task_id for task_id in ids if task_id not in known]
    if unknown:
        raise RunError(f"--task-id: no task {unknown[0]!r} in the selected tasks (amnesia-bench list tasks)")
    wanted = set(ids)
    return [task for task in tasks if task.id in wanted]


def _round_robin(lists: list[list[Task]]) -> Iterator[Task]:
    """One item from each list in turn until all are used up."""
    for row in itertools.zip_longest(*lists):
        yield from (task for task in row if task is not None)


def _git_commit() -> str | None:
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def _package_version() -> str | None:
    try:
        return metadata.version("dsh-memory-forget")
    except metadata.PackageNotFoundError:
        return None


def build_manifest(
    options: RunOptions, model: Model, tasks: list[Task], left_out: list[str] | None = None
) -> dict[str, Any]:
    """The run's manifest; `left_out`: groups the --limit dropped every task of (after --group)."""
    content_hash, files = task_set_hash(options.tasks)
    return {
        "format": MANIFEST_FORMAT,
        "package_version": _package_version(),
        "git_commit": _git_commit(),
        "created_wall": time.time(),
        "seed": options.seed,
        "epoch": options.epoch,
        "model": model.describe(),
        "arms": {spec.name: spec.build().describe() for spec in options.arms},
        "budget_tokens": options.budget_tokens,
        "tasks": {
            "root": str(options.tasks),
            "count": len(tasks),
            "content_hash": content_hash,
            "files": files,
        },
        "groups": sorted({t.group for t in tasks}),
        "task_ids": sorted(options.task_ids),
        "limit": options.limit,
        "limit_seed": options.limit_seed,
        "groups_left_out_by_limit": left_out or [],
        "argv": options.argv,
        "fairness": fairness_by_arm(options, tasks),
        "judge": judge_description(options.judge) if options.judge else None,
    }


def fairness_by_arm(options: RunOptions, tasks: list[Task]) -> dict[str, dict[str, Any] | None]:
    """Per arm, how its time rule splits the selected tasks' probe values (`tasks.fairness.fairness_summary`:
    the oracle shares every report prints); None for an arm that does not forget by the writer's ttl."""
    found: dict[str, dict[str, Any] | None] = {}
    for spec in options.arms:
        rule = time_rule_of(spec.build())
        if rule is None:
            found[spec.name] = None
            continue
        fates = value_fates(tasks, rule, lambda task_id: pair_seed(options.seed, task_id, options.epoch))
        found[spec.name] = fairness_summary(fates)
    return found


def _write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _check_resumable(path: Path, manifest: dict[str, Any]) -> None:
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RunError(f"{path}: cannot resume: unreadable manifest ({exc})") from None
    for key in _RESUME_KEYS:
        if previous.get(key, _RESUME_DEFAULTS.get(key)) != manifest.get(key):
            raise RunError(f"{path}: cannot resume: {key} differs from the original run (use a new --out)")


def _prepare_fresh_folder(out: Path, overwrite: bool, rewritten: set[Path]) -> None:
    """A fresh run replaces an earlier run in the same folder only when told to (`overwrite`), and never a
    folder that is not a run folder, so logs are never lost by accident and two runs can never mix.
    `rewritten`: the log paths this run writes (their files are emptied and kept, see `_clear_logs`)."""
    if out.exists() and any(out.iterdir()):
        if not (out / "manifest.json").is_file():
            raise RunError(f"--out: {out} is not empty and holds no manifest.json; choose a new folder")
        logs = sum(1 for _ in (out / "logs").rglob("*.jsonl")) if (out / "logs").is_dir() else 0
        if logs and not overwrite:
            raise RunError(
                f"--out: {out} already holds a run ({logs} session logs); "
                "pass --resume to continue it or --overwrite to replace it"
            )
        _clear_logs(out / "logs", rewritten)
        for part in _RUN_PARTS[1:]:
            shutil.rmtree(out / part, ignore_errors=True)
    # A new run folder is its owner's only (0700); the files in it get the user's umask. A folder that
    # exists keeps the mode its owner gave it.
    out.mkdir(mode=0o700, parents=True, exist_ok=True)


def _clear_logs(logs: Path, rewritten: set[Path]) -> None:
    """Empty in place the earlier logs this run writes again and delete every other file under `logs`.

    An emptied log is an unfinished pair, exactly like a deleted one (a crash before it is rewritten leaves it
    to `--resume`), but keeping the file spares the file system a delete-then-create per pair: ext4 without
    a journal skips recently freed inodes when it allocates new ones, so creating thousands of logs right
    after deleting thousands cost about 0.5 ms per file, more than replaying a small pair."""
    if logs.is_symlink():
        logs.unlink()
    if not logs.is_dir():
        return
    for folder, dirs, files in os.walk(logs, topdown=False):
        base = Path(folder)
        for name in files:
            path = base / name
            if path in rewritten and not path.is_symlink():  # never truncate through a link
                os.truncate(path, 0)
            else:
                path.unlink()
        for name in dirs:
            path = base / name
            if path.is_symlink():
                path.unlink()
            elif not any(path.iterdir()):  # a folder still holding an emptied log stays
                path.rmdir()


def _jobs(options: RunOptions, tasks: list[Task]) -> list[PairJob]:
    """Every pair, task by task: the arms of a task follow each other, so a worker converts the task for its
    `task_start` record once (runners.replay.task_to_dict) and a batch sent to a worker process carries each
    task once."""
    # pathlib parses every part it joins (visible in a 900-task run's profile): join each arm's folders once.
    folders = [
        (spec, options.out / "logs" / spec.name, options.out / "work" / spec.name) for spec in options.arms
    ]
    jobs = []
    for task in tasks:
        seed = pair_seed(options.seed, task.id, options.epoch)
        name = log_filename(task.id)
        for spec, logs, work in folders:
            jobs.append(
                PairJob(
                    arm=spec,
                    task=task,
                    seed=seed,
                    log_path=logs / name,
                    workdir=work / name.removesuffix(".jsonl"),
                    budget_tokens=options.budget_tokens,
                    judge=options.judge,
                )
            )
    return jobs


def pair_seed(seed: int, task_id: str, epoch: int = 0) -> int:
    """A pair's seed: from (run seed, task id) — never the run order or the other arms — with the epoch folded
    in from epoch 1 on (epoch 0 keeps the seeds of a run without epochs)."""
    return derive_seed(seed, task_id) if epoch == 0 else derive_seed(seed, task_id, f"epoch{epoch}")


def _ignore(line: str) -> None:
    return None


def preflight(model: Model) -> None:
    """The model's own check that it can answer at all (a key, a reachable server), before anything is
    written: a run that cannot make one call fails in one line and leaves no run folder behind. Models
    without a `preflight` method (scripted, local) need none."""
    check = getattr(model, "preflight", None)
    if check is not None:
        check()


def run(options: RunOptions, warn: Callable[[str], None] = _ignore) -> RunSummary:
    """Run (or resume) a benchmark into `options.out`; `warn(line)` hears about settings that mislead (an
    option that can change no outcome on the selected tasks)."""
    started = time.perf_counter()
    if options.workers < 1:
        raise RunError(f"--workers: expected at least 1, got {options.workers}")
    if options.epoch < 0:
        raise RunError(f"--epochs: expected at least 1 epoch, got epoch {options.epoch}")
    if options.limit is not None and options.limit < 1:
        raise RunError(f"--limit: expected at least 1 task, got {options.limit}")
    if options.budget_tokens < 0:
        raise RunError(f"--budget: expected a non-negative number of tokens, got {options.budget_tokens}")
    if options.resume and options.overwrite:
        raise RunError("--resume and --overwrite contradict each other: continue the run or replace it")
    executor = Executor.parse(options.executor)
    model = resolve_model(options.model)
    preflight(model)
    if options.judge is not None:
        preflight(judge_model(options.judge))
    pool = worker_pool(options.workers, executor)
    with pool or contextlib.nullcontext():
        return _run(options, warn, executor, model, pool, started)


def _run(
    options: RunOptions,
    warn: Callable[[str], None],
    executor: Executor,
    model: Model,
    pool: WorkerPool | None,
    started: float,
) -> RunSummary:
    # The workers read the task files too: the parent only merges what they found (a 10^5-task set takes
    # minutes to read in one process, and the workers would wait for it).
    in_groups = select_tasks(load_tasks(options.tasks, pool.map if pool else map), options.groups, None)
    in_groups = tasks_with_ids(in_groups, options.task_ids)
    tasks = select_tasks(in_groups, (), options.limit, options.limit_seed)
    if options.limit is not None and options.limit > len(in_groups):
        available = len(in_groups)
        warn(f"--limit {options.limit}: only {available} tasks to choose from; running all {available}")
    for line in ineffective_options(options.arms, tasks):
        warn(line)
    left_out = sorted({t.group for t in in_groups} - {t.group for t in tasks})
    manifest = build_manifest(options, model, tasks, left_out)
    manifest_path = options.out / "manifest.json"
    jobs = _jobs(options, tasks)
    if options.resume and manifest_path.exists():
        _check_resumable(manifest_path, manifest)
    else:
        _prepare_fresh_folder(options.out, options.overwrite, {job.log_path for job in jobs})
        _write_json_atomically(manifest_path, manifest)
    if options.shard is not None:
        index, count = options.shard
        jobs = [job for job in jobs if shard_of(job.arm.name, job.task.id, count) == index]
    linked = _link_shared_logs(options.shared_logs, manifest, jobs, options.resume)
    pending = [
        job
        for job in jobs
        if job.log_path not in linked and not (options.resume and is_finished(job.log_path))
    ]
    try:
        with tqdm(
            total=len(pending), desc="pairs", unit="pair", file=sys.stderr, disable=not options.progress
        ) as bar:
            counts = execute(
                pending,
                model,
                options.model,
                workers=options.workers,
                executor=executor,
                done=bar.update,
                pool=pool,
            )
    except KeyboardInterrupt:
        # The workers have stopped (runners.execute): each log is complete or left for --resume.
        finished = sum(is_finished(job.log_path) for job in jobs)
        raise RunInterrupted(finished, len(jobs)) from None
    cached = isinstance(model, CachedModel)
    failed = tuple(_failure(job) for job in pending if not is_finished(job.log_path))
    return RunSummary(
        out=options.out,
        pairs=len(pending),
        skipped=len(jobs) - len(pending),
        model_calls=counts.calls,
        probes=counts.probes,
        seconds=time.perf_counter() - started,
        cache_hits=counts.cache_hits if cached else None,
        cache_misses=counts.cache_misses if cached else None,
        failed=failed,
        shared=len(linked),
    )


# The manifest fields that make another run's logs of an arm this run's logs (with the arm's own config).
_SAME_PAIRS_KEYS = (
    "seed",
    "epoch",
    "model",
    "budget_tokens",
    "task_ids",
    "tasks",
    "groups",
    "limit",
    "limit_seed",
    "judge",  # a judged run's probe records carry its judge's verdicts
)


def _link_shared_logs(
    shared_logs: tuple[tuple[str, Path], ...], manifest: dict[str, Any], jobs: list[PairJob], resume: bool
) -> set[Path]:
    """Link (relative symlinks) every finished log of a shared arm from its run folder in place of this run's
    unfinished one; returns the logs linked. A pair whose log the other run has not finished is replayed
    here (the same pairs give the same logs). The other run must have run the arm as this run does. On
    resume, a link to a log no longer finished is removed first, so a replay never writes through it."""
    if resume:
        for job in jobs:
            if job.log_path.is_symlink() and not is_finished(job.log_path):
                job.log_path.unlink()
    sources = dict(shared_logs)
    for arm, source in sources.items():
        path = source / "manifest.json"
        try:
            other = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue  # not started yet: every pair is replayed here
        except (OSError, json.JSONDecodeError) as exc:
            raise RunError(f"{path}: cannot share its logs: unreadable manifest ({exc})") from None
        for key in _SAME_PAIRS_KEYS:
            if other.get(key, _RESUME_DEFAULTS.get(key)) != manifest.get(key):
                raise RunError(f"{path}: cannot share the logs of arm {arm!r}: {key} differs from this run")
        if other.get("arms", {}).get(arm) != manifest["arms"].get(arm):
            raise RunError(f"{path}: cannot share the logs of arm {arm!r}: arms.{arm} differs from this run")
    linked: set[Path] = set()
    for job in jobs:
        source = sources.get(job.arm.name)
        if source is None or is_finished(job.log_path):
            continue
        origin = source / "logs" / job.arm.name / job.log_path.name
        if origin.is_symlink() or not is_finished(origin):
            continue  # a link of a link would break when one folder moves
        job.log_path.parent.mkdir(parents=True, exist_ok=True)
        link = job.log_path.with_name(job.log_path.name + ".link")
        link.unlink(missing_ok=True)
        os.symlink(os.path.relpath(origin, job.log_path.parent), link)
        os.replace(link, job.log_path)
        linked.add(job.log_path)
    return linked


def _failure(job: PairJob) -> FailedPair:
    """A pair left unfinished by a failed model call or arm backend, as its last record tells it."""
    record = last_record(job.log_path) or {}
    if record.get("type") != PairError.TYPE:
        return FailedPair(job.arm.name, job.task.id, pair_error_cause({}), "unfinished")
    return FailedPair(job.arm.name, job.task.id, pair_error_cause(record), str(record.get("error")))


def raise_if_failed(summaries: list[RunSummary]) -> None:
    """`PairsFailed` when a pair of any of the runs stopped on a failed model call or arm backend."""
    failed = [line for summary in summaries for line in summary.failed]
    if failed:
        raise PairsFailed(failed, sum(summary.pairs for summary in summaries))
