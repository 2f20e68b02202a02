"""The harness's errors: one tree, one exit-code mapping.

```
HarnessError                     every error the harness raises on purpose; one line per problem
├── BadInput (ValueError)        the user's input cannot work            -> exit 2
│   ├── TaskSetError             a task file or folder (file:line: field: problem, every problem found)
│   ├── ArmConfigError           an arm name, an arm option, an arm-config file
│   │   └── UnknownArmError      a name no arm or variant is registered under
│   ├── ModelConfigError         a model spec or a model setting (missing id, package, bad number)
│   │   └── ModelSpecError       a model spec whose provider prefix is unknown
│   ├── RunError                 run options or the run folder (e.g. --resume on another design)
│   └── ReportInputError         a run folder, session log or summary that a report reads
├── ServiceError (RuntimeError)  something outside the harness failed for good  -> exit 1
│   └── ModelCallError           a model call that failed after its retries; it never becomes an answer
└── RunInterrupted               the user stopped a run (Ctrl-C); finished pairs are kept -> exit 130
```

Engine errors (`amnesia.errors.AmnesiaError`) met while replaying are bad input too (exit 2).
`exit_code` is the only place where an error becomes an exit code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from amnesia.errors import AmnesiaError

EXIT_SERVICE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process that Ctrl-C stopped


class HarnessError(Exception):
    """Base of every error the harness raises on purpose."""

    hint: str | None = None  # one more line the CLI prints as `hint: ...` (what to do about it)

    def problems(self) -> list[str]:
        """The one-line messages to print, one per problem (most errors have exactly one)."""
        return [str(self)]


class BadInput(HarnessError, ValueError):
    """The user's input (files, options, specs) cannot work; the CLI exits 2."""


class ServiceError(HarnessError, RuntimeError):
    """A service the harness depends on failed for good; the CLI exits 1."""


class TaskSetError(BadInput):
    """A task set failed validation; `errors` holds every problem found (each prints as one line)."""

    def __init__(self, errors: Sequence[object]) -> None:
        self.errors = list(errors)
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        super().__init__(f"{self.errors[0]}{more}" if self.errors else "invalid task set")

    def problems(self) -> list[str]:
        """Every problem of the set, one line each."""
        return [str(error) for error in self.errors] or [str(self)]


class ArmConfigError(BadInput):
    """An arm name, an arm option or an arm-config file is wrong; names the arm, option and value."""


class UnknownArmError(ArmConfigError):
    """No arm or variant is registered under the name."""


class ModelConfigError(BadInput):
    """A model spec or setting that cannot work (missing model id, package not installed, bad number...)."""


class ModelSpecError(ModelConfigError):
    """A model spec whose provider prefix is unknown; the message lists the known ones."""


class RunError(BadInput):
    """Run options or a run folder that cannot work (e.g. --resume into a run of another design)."""


class ReportInputError(BadInput):
    """A run folder, session log or summary file a report reads is missing or malformed (names file:line)."""


class ModelCallError(ServiceError):
    """A model call that failed for good (retries exhausted, or not retryable)."""


class RunInterrupted(HarnessError):
    """The user stopped a run (Ctrl-C, SIGINT): the pairs finished so far are complete in their logs, the
    others are left for `--resume`. Not an error of the input or of a service: the CLI prints the message as
    it is and exits 130."""

    def __init__(self, finished: int, total: int) -> None:
        self.finished = finished
        self.total = total
        super().__init__(f"interrupted: {finished} of {total} pairs finished; rerun with --resume")


@dataclass(frozen=True)
class FailedPair:
    """A pair a run left unfinished, as its last record tells it."""

    arm: str
    task_id: str
    cause: str  # what stopped it, in words: "a model error", "an arm backend error" (`pair_error_cause`)
    error: str  # the pair_error's one line ("unfinished" when the log has none)

    def __str__(self) -> str:
        return f"{self.arm} {self.task_id}: {self.error}"


class PairsFailed(ServiceError):
    """Pairs of a run stopped on a failed model call or a failed arm backend (each log ends with its
    `pair_error` record); the other pairs ran. One line: how many, on what, the first failure, and that
    `--resume` retries only those pairs."""

    def __init__(self, failed: Sequence[FailedPair], total: int) -> None:
        self.failed = list(failed)
        causes = Counter(pair.cause for pair in self.failed)
        if len(causes) == 1:
            what = f"failed on {self.failed[0].cause} ("
        else:
            what = "failed (" + ", ".join(f"{count} on {cause}" for cause, count in causes.items()) + "; "
        super().__init__(
            f"{len(self.failed)} of {total} pairs {what}rerun with --resume to retry only those); "
            f"first: {self.failed[0]}"
        )


# What the CLI turns into `error: ...` lines and an exit code; anything else is a bug and keeps its traceback.
# OSError: an unreadable or unwritable path the user named (e.g. --out under a file).
HANDLED_ERRORS: tuple[type[BaseException], ...] = (HarnessError, AmnesiaError, OSError)


def exit_code(error: BaseException) -> int:
    """The CLI exit code for a handled error: 1 a failed service, 2 bad input (harness, engine, path), 130 a
    run the user interrupted."""
    if isinstance(error, RunInterrupted):
        return EXIT_INTERRUPTED
    return EXIT_SERVICE if isinstance(error, ServiceError) else EXIT_BAD_INPUT


def problems(error: BaseException) -> list[str]:
    """The one-line messages to print for a handled error."""
    if isinstance(error, HarnessError):
        return error.problems()
    return [str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__]
