"""The report header prints the oracle shares the run recorded in its manifest (reports.fairness)."""

from __future__ import annotations

from reports.fairness import oracle_lines

SUMMARY = {
    "wrong_side": {"expect": [15, 113], "stale": [36, 49], "poison": [3, 14]},
    "by_mechanism": {},
    "oracle": None,
    "separated_mechanisms": ["mechanism untrusted-source: time alone keeps 100% ..."],
    "exact_gaps": [],
}


def test_the_header_prints_each_arms_shares_and_names_the_arms_without_a_time_rule() -> None:
    manifest = {"fairness": {"amnesia": SUMMARY, "full-memory": None, "no-memory": None}}
    (paragraph, blank) = oracle_lines([manifest, dict(manifest)])  # two runs, one record: printed once
    assert blank == ""
    assert (
        "`amnesia` expected hidden 15/113 (13%), stale shown 36/49 (73%), poison shown 3/14 (21%)"
        in paragraph
    )
    assert "`full-memory`, `no-memory`: no forgetting by the writer's ttl" in paragraph
    assert "Time alone separates the values of mechanism untrusted-source" in paragraph
    assert "acts as an oracle" not in paragraph


def test_an_oracle_set_and_an_old_run_are_said_so() -> None:
    oracle = {**SUMMARY, "oracle": "the set: time alone keeps 100% ...", "exact_gaps": ["t: poison 'x' ..."]}
    (paragraph, _) = oracle_lines([{"fairness": {"amnesia": oracle}}])
    assert (
        "**The task set acts as an oracle for `amnesia` (the set: time alone keeps 100% ...)**" in paragraph
    )
    assert "1 value(s) are probed on an arm's cut-off (exact gaps)" in paragraph
    (old, _) = oracle_lines([{}])
    assert old.endswith("not recorded (the run predates them).")
