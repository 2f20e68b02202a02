"""The model judge beside the rules (`run --judge`, `rescore --judge`; tasks.judge): how often the judge and
the rules agree (Cohen's kappa, the confusion matrix, the disagreeing answers), and the judge's verdict as
the primary one (`report --primary judge`).

The verdicts are read from the probe records of the run folders whose manifest names a judge (`judge`);
a run without one has none, and its report is unchanged. With `--primary judge`, a probe the judge answered
(a verdict other than `unparsed`) takes the judge's classification in every table; unparsed replies keep the
rules' verdict, and the section says how many there were.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from reports.logread import RunData
from tasks.errors import ReportInputError
from tasks.judge import UNPARSED
from tasks.logschema import ProbeRecord, read_log
from tasks.spec import CLASSIFICATIONS

PRIMARIES = ("rules", "judge")
_KEYS = ["run", "arm", "task_id", "session_index", "turn_index"]
SHOWN_DISAGREEMENTS = 20  # the section lists this many disagreeing answers (all are in judge.csv)


def judge_verdicts(data: RunData) -> pd.DataFrame | None:
    """One row per judged probe: the probe's keys (run, arm, task_id, session_index, turn_index), the rules'
    `classification`, the `judge`'s verdict and the `answer`; None when no run names a judge."""
    judged_runs = {run.index for run in data.runs if run.manifest.get("judge")}
    if not judged_runs:
        return None
    rows = []
    for run, arm, task_id, file in data.tasks[["run", "arm", "task_id", "file"]].itertuples(index=False):
        if run not in judged_runs:
            continue
        for record in read_log(Path(file)):
            if record["type"] == ProbeRecord.TYPE and record.get("judge") is not None:
                key = (run, arm, task_id, record["session_index"], record["turn_index"])
                rows.append((*key, record["classification"], record["judge"], record["answer"]))
    return pd.DataFrame(rows, columns=[*_KEYS, "classification", "judge", "answer"])


def cohen_kappa(first: pd.Series, second: pd.Series) -> float:
    """Cohen's kappa of two raters over the same items: (observed - chance agreement) / (1 - chance), chance
    from each rater's own class shares; 1.0 when both use one and the same class throughout."""
    observed = float((first.to_numpy() == second.to_numpy()).mean())
    shares_first = first.value_counts(normalize=True)
    shares_second = second.value_counts(normalize=True)
    chance = float(sum(share * shares_second.get(label, 0.0) for label, share in shares_first.items()))
    return 1.0 if chance == 1.0 else (observed - chance) / (1.0 - chance)


def confusion(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Rules' classification (rows) by the judge's verdict (columns), every class shown, unparsed last."""
    columns = [*CLASSIFICATIONS, UNPARSED]
    table = pd.crosstab(verdicts["classification"], verdicts["judge"])
    return table.reindex(index=list(CLASSIFICATIONS), columns=columns, fill_value=0)


def with_primary(data: RunData, verdicts: pd.DataFrame | None, primary: str) -> RunData:
    """`data` with the judge's verdicts as the probes' classification (`primary="judge"`), else unchanged;
    `ReportInputError` for an unknown primary, or the judge asked for where no run was judged."""
    if primary not in PRIMARIES:
        raise ReportInputError(f"--primary: expected one of {'|'.join(PRIMARIES)}, got {primary!r}")
    if primary == "rules":
        return data
    if verdicts is None:
        raise ReportInputError("--primary judge: no run was judged (run or rescore it with --judge MODEL)")
    parsed = verdicts[verdicts["judge"] != UNPARSED][[*_KEYS, "judge"]]
    probes = data.probes.merge(parsed, on=_KEYS, how="left")
    probes["classification"] = probes["judge"].fillna(probes["classification"])
    return dataclasses.replace(data, probes=probes.drop(columns="judge"))


def render_section(verdicts: pd.DataFrame | None, primary: str) -> list[str]:
    """The report.md section "Judge vs rules" (empty without judged probes)."""
    if verdicts is None or verdicts.empty:
        return []
    parsed = verdicts[verdicts["judge"] != UNPARSED]
    binary_rules = parsed["classification"] == "correct"
    binary_judge = parsed["judge"] == "correct"
    kappa = cohen_kappa(parsed["classification"], parsed["judge"]) if len(parsed) else float("nan")
    kappa_binary = cohen_kappa(binary_rules, binary_judge) if len(parsed) else float("nan")
    agree = int((parsed["classification"] == parsed["judge"]).sum())
    table = confusion(verdicts)
    lines = [
        "## Judge vs rules",
        "",
        f"Primary verdict in this report: **{primary}**. {len(verdicts)} judged probes, "
        f"{len(verdicts) - len(parsed)} unparsed judge replies; on the others the judge and the rules "
        f"agree on {agree} of {len(parsed)}: Cohen's κ = {kappa:.3f} over the five classes, "
        f"{kappa_binary:.3f} on correct vs not-correct.",
        "",
        "| rules \\ judge | " + " | ".join(table.columns) + " |",
        "|---|" + "---|" * len(table.columns),
    ]
    lines += [f"| {label} | " + " | ".join(str(v) for v in row) + " |" for label, row in table.iterrows()]
    disagreeing = parsed[parsed["classification"] != parsed["judge"]]
    if not disagreeing.empty:
        shown = disagreeing.head(SHOWN_DISAGREEMENTS)
        lines += ["", f"Disagreements ({len(disagreeing)}; the first {len(shown)}, all in judge.csv):", ""]
        lines += ["| arm | task | answer | rules | judge |", "|---|---|---|---|---|"]
        for row in shown.itertuples(index=False):
            answer = " ".join(str(row.answer).split()).replace("|", "\\|")[:120]
            lines.append(f"| {row.arm} | {row.task_id} | {answer} | {row.classification} | {row.judge} |")
    return lines
