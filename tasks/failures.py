"""Failure codes: what went wrong on a probe that is not correct, named after the way memory failed.

A code is a function of the probe's mechanism and its classification only (`failure_code`), so the runner
writes it on the probe record (`failure`), the log reader fills it in for logs written before it existed, and
a rescored run gets it again from the new classification, all from this one function. docs/reports.md defines
each code; the reports count them per arm.
"""

from __future__ import annotations

# code -> what it means (the order is the reports' column order: invalidated memory first)
FAILURE_CODES: dict[str, str] = {
    "stale-memory": "asserted an out-of-date value (changed-fact, implicit-change, lapsed-constraint, ...)",
    "premise-accepted": "a false-premise probe: went along with the stale value the question presupposed",
    "cascade-missed": "a cascade probe: gave the dependent fact as it was before its base fact changed",
    "deletion-leak": "a user-deleted probe: brought back the value the user asked to forget",
    "poisoned": "asserted a value planted by an untrusted source or a sub-agent's scratch",
    "false-forget": "a still-valid probe: said it did not know a value that was written and still true",
    "abstained": "said it did not know, on a probe whose answer was still in the history",
    "wrong": "asserted none of the probe's values and did not abstain",
}
# The codes of answers that relied on invalidated memory (a stale or planted value, or an accepted premise).
INVALIDATED_CODES = frozenset(
    {"stale-memory", "premise-accepted", "cascade-missed", "deletion-leak", "poisoned"}
)
# A stale answer's code, for the mechanisms whose stale answer has a name of its own.
_STALE_CODES = {
    "false-premise": "premise-accepted",
    "cascade": "cascade-missed",
    "user-deleted": "deletion-leak",
}


def failure_code(mechanism: str | None, classification: str) -> str | None:
    """The failure code of a probe (None when it is correct): `stale` is `stale-memory` unless the
    mechanism names its own stale failure (false-premise, cascade, user-deleted); `abstained` on a
    still-valid probe is `false-forget`; `poisoned`, `abstained` and `wrong` are themselves otherwise."""
    if classification == "correct":
        return None
    if classification == "stale":
        return _STALE_CODES.get(mechanism or "", "stale-memory")
    if classification == "abstained" and mechanism == "still-valid":
        return "false-forget"
    if classification in FAILURE_CODES:
        return classification
    raise ValueError(f"classification: unknown value {classification!r}")
