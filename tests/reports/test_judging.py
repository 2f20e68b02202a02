"""Judge-rule agreement (reports.judging): Cohen's kappa against a hand-worked table, its invariants, and the
judge's verdicts as the primary ones."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reports.judging import cohen_kappa, confusion
from tasks.judge import parse_verdict

LABELS = st.sampled_from(["correct", "stale", "poisoned", "abstained", "wrong"])


def test_kappa_of_a_hand_worked_table() -> None:
    # 50 items: both yes 20, A yes B no 5, A no B yes 10, both no 15. Observed 0.7; chance 0.5*0.6 + 0.5*0.4.
    first = pd.Series(["yes"] * 25 + ["no"] * 25)
    second = pd.Series(["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15)
    assert cohen_kappa(first, second) == pytest.approx(0.4)


@given(st.lists(st.tuples(LABELS, LABELS), min_size=1, max_size=40))
def test_kappa_is_symmetric_at_most_one_and_one_for_identical_raters(pairs: list[tuple[str, str]]) -> None:
    first, second = pd.Series([a for a, _ in pairs]), pd.Series([b for _, b in pairs])
    assert cohen_kappa(first, second) == pytest.approx(cohen_kappa(second, first))
    assert cohen_kappa(first, second) <= 1.0 + 1e-12
    assert cohen_kappa(first, first) == pytest.approx(1.0)


def test_confusion_shows_every_class_and_unparsed_last() -> None:
    verdicts = pd.DataFrame(
        {"classification": ["correct", "stale", "correct"], "judge": ["correct", "x", "wrong"]}
    )
    verdicts["judge"] = verdicts["judge"].map(parse_verdict)
    table = confusion(verdicts)
    assert list(table.columns) == ["correct", "stale", "poisoned", "abstained", "wrong", "unparsed"]
    assert table.loc["correct"].tolist() == [1, 0, 0, 0, 1, 0] and table.loc["stale", "unparsed"] == 1
    assert int(table.to_numpy().sum()) == 3
