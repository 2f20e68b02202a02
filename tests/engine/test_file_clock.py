"""FileClock: the time another process writes into a file (the MCP server's `--clock-file`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia.clock import Clock, FileClock
from amnesia.errors import InvalidInput


def test_reads_the_file_at_every_call(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    path.write_text("1000.5\n", encoding="utf-8")
    clock = FileClock(path)
    assert isinstance(clock, Clock)
    assert clock.now() == 1000.5
    path.write_text("  86400  ", encoding="utf-8")
    assert clock.now() == 86_400.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the clock file (FileNotFoundError)"),
        ("", "the clock file must hold a time in seconds, got ''"),
        ("tomorrow", "the clock file must hold a time in seconds, got 'tomorrow'"),
        ("nan", "the clock file must hold a time in seconds, got 'nan'"),
        ("inf", "the clock file must hold a time in seconds, got 'inf'"),
    ],
)
def test_a_bad_file_is_refused_up_front_in_one_line(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "clock"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidInput) as refused:
        FileClock(path)
    assert str(refused.value) == f"{path}: {message}"


@settings(deadline=None)  # file writes: on a loaded machine an example can exceed hypothesis' 200 ms
@given(st.lists(st.floats(min_value=0, max_value=1e10, allow_nan=False), min_size=2, max_size=20))
def test_it_never_goes_backwards(times: list[float]) -> None:
    """Whatever sequence of times is written, every value read is >= the one before, or the read refuses."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "clock"
        path.write_text(repr(times[0]), encoding="utf-8")
        clock = FileClock(path)
        last = clock.now()
        for when in times[1:]:
            path.write_text(repr(when), encoding="utf-8")
            if when < last:
                with pytest.raises(InvalidInput, match="the clock went backwards"):
                    clock.now()
            else:
                last = clock.now()
                assert last == when
