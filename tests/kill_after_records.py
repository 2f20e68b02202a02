"""`python tests/kill_after_records.py N ARGS...`: run `amnesia-bench ARGS` and crash or interrupt it at a
chosen point.

The process that writes its N-th log record (the CLI itself, or any of its `--workers`, which re-import this
file as their main module under the spawn start method, so the hook is in them too) writes half a record and
SIGKILLs its whole process group, as a power cut would. With `AMNESIA_TEST_SIGNAL=INT` it writes the record
whole and sends SIGINT to the group instead, as Ctrl-C in a terminal does — only the first process to get
there (the file named by `AMNESIA_TEST_SIGNAL_ONCE` is made once), as one key press would. The point is chosen
by count, never by a timer, so a test that uses it does the same thing on an idle and on a loaded machine.
Start it in a session of its own (`start_new_session=True`): it refuses to signal a process group it does not
lead.
"""

from __future__ import annotations

import os
import signal
import sys

from tasks.logschema import LogWriter, Record

LIMIT_VARIABLE = "AMNESIA_TEST_KILL_AFTER_RECORDS"
SIGNAL_VARIABLE = "AMNESIA_TEST_SIGNAL"  # KILL (the default): a crash; INT: a Ctrl-C
ONCE_VARIABLE = "AMNESIA_TEST_SIGNAL_ONCE"  # INT: a path only the first process to signal creates
_TORN_RECORD = '{"v":1,"seq":'  # what a write cut by the crash leaves behind

_write = LogWriter.write
_written = 0


def _write_or_crash(self: LogWriter, record: Record) -> None:
    global _written
    _written += 1
    if _written == int(os.environ[LIMIT_VARIABLE]) and os.environ.get(SIGNAL_VARIABLE) == "INT":
        _write(self, record)
        if _first_to_signal():
            os.killpg(os.getpgid(0), signal.SIGINT)
        return
    if _written == int(os.environ[LIMIT_VARIABLE]):
        self._file.write(_TORN_RECORD)
        self._file.flush()
        os.killpg(os.getpgid(0), signal.SIGKILL)
    _write(self, record)


def _first_to_signal() -> bool:
    try:
        os.close(os.open(os.environ[ONCE_VARIABLE], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


if os.getpgid(0) != os.getsid(0):
    raise SystemExit("kill_after_records: start me with start_new_session=True")
LogWriter.write = _write_or_crash  # type: ignore[method-assign]

if __name__ == "__main__":
    from amnesia_bench.cli import main

    os.environ[LIMIT_VARIABLE] = sys.argv[1]  # spawned workers inherit it
    sys.argv = ["amnesia-bench", *sys.argv[2:]]
    main()
