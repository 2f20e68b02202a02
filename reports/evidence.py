"""Evidence retention and free-text scores on imported datasets (LoCoMo, LongMemEval), from the logs only.

**Evidence retention** (model-free): a probe that names its evidence logs, for the task's writes carrying
that evidence, how many were injected at the probe, still stored but not injected, forgotten, or never
stored (`evidence_memories` on the probe record, written by the runner). Here the shares are ratios of
sums over the probes of each cell (arm × budget × ttl policies × mechanism), with 95% CIs from the
task-clustered bootstrap of `reports.stats` (a cluster is one task — one LoCoMo conversation — whatever runs
repeat it). `coverage` is the share of
evidence-naming probes whose evidence reached at least one write (the rest cite dialog turns that no
observation was drawn from). `block tokens/probe` is the memory block's size at the probe.

**Per evidence id** (the unit published retrieval results count: a dialog id is retained when a memory
carrying it is): the share of the probes' evidence ids injected, stored, forgotten, not stored, or carried by
no memory at all (`id_no_memory`: LoCoMo cites dialog turns no observation was drawn from), beside the
per-memory shares. **Line overhead**: the share of the block's tokens that are not the injected memories'
own text — the block title and each line's header (`- [m-0001] fact · written 3d ago · `).

**Free text**: the LoCoMo-style token F1 of the answer against the gold answer (`tasks.scoring.
free_text_score`; an abstention question scores 1 for an abstention), beside the value-matching success.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from reports.logread import RunData
from reports.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, cluster_keys, ratio_cis
from tasks.scoring import free_text_score

STATES = ("injected", "stored", "forgotten", "not_stored")
ID_STATES = (*STATES, "no_memory")
CELL = ["arm", "budget_tokens", "arm_ttl_policy", "written_ttl_policy", "mechanism"]
CLUSTER = ["task_id"]  # a task's runs (seeds, epochs, models) are repeated measures of it


def arm_ttl_policy(config: dict[str, Any]) -> str:
    """The arm's own ttl policy option when its configuration names one ("" otherwise)."""
    options = config.get("options", {}) if isinstance(config.get("options"), dict) else {}
    return str(options.get("ttl_policy", config.get("ttl_policy", "")) or "")


def probe_frame(data: RunData) -> pd.DataFrame:
    """The probes with their cell columns (budget, ttl policies) and the block tokens at the probe."""
    probes = data.probes
    if probes.empty or "mechanism" not in probes.columns:
        return pd.DataFrame()
    task_cols = ["run", "arm", "task_id", "budget_tokens", "written_ttl_policy"]
    frame = probes.merge(data.tasks[task_cols], on=["run", "arm", "task_id"], how="left")
    turn = ["run", "arm", "task_id", "session_index", "turn_index"]
    tokens = data.injections[[*turn, "tokens"]].rename(columns={"tokens": "block_tokens"})
    frame = frame.merge(tokens, on=turn, how="left")
    policies = {arm: arm_ttl_policy(config) for arm, config in data.arm_configs.items()}
    frame["arm_ttl_policy"] = frame["arm"].map(policies).fillna("")
    frame["budget_tokens"] = frame["budget_tokens"].fillna(-1).astype(int)
    frame["mechanism"] = frame["mechanism"].fillna("").replace("", "-")
    frame["written_ttl_policy"] = frame["written_ttl_policy"].fillna("")
    return frame


def _with_all(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([frame, frame.assign(mechanism="all")], ignore_index=True)


def _cells(
    frame: pd.DataFrame, nums: list[str], dens: list[str], resamples: int, totals: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """Per cell: the ratio of summed `nums[i]` over summed `dens[i]`, with cluster-bootstrap CIs, and the
    plain sums of the `totals` columns."""
    rows = []
    for cell, part in _with_all(frame).groupby(CELL, sort=True):
        clusters = part.groupby(CLUSTER)[sorted(set(nums + dens))].sum()
        keys = cluster_keys(clusters.index)
        estimates = ratio_cis(
            clusters[nums].to_numpy(), clusters[dens].to_numpy(), keys, resamples, DEFAULT_SEED
        )
        row: dict[str, Any] = dict(zip(CELL, cell, strict=True))
        row.update({"probes": len(part), "clusters": len(clusters)})
        row.update({name: int(part[name].sum()) for name in totals})
        for name, estimate in zip(nums, estimates, strict=True):
            row.update({name: estimate.value, f"{name}_lo": estimate.lo, f"{name}_hi": estimate.hi})
        rows.append(row)
    return rows


def evidence_table(data: RunData, resamples: int = DEFAULT_RESAMPLES) -> pd.DataFrame:
    """Evidence retention per arm × budget × ttl policies × mechanism (and mechanism "all"), with CIs."""
    if "evidence_memories" in data.probes and data.probes["evidence_memories"].isna().all():
        return pd.DataFrame()  # no probe names evidence (a generated run): nothing to merge
    frame = probe_frame(data)
    if frame.empty or frame["evidence_memories"].isna().all():
        return pd.DataFrame()
    frame = frame[frame["evidence_memories"].notna()].copy()
    counts = pd.DataFrame(list(frame["evidence_memories"]), index=frame.index).fillna(0)
    for name in ("memories", *STATES):
        frame[name] = counts.get(name, 0).astype(float)
    frame["covered"] = (frame["memories"] > 0).astype(float)
    frame["one"] = 1.0
    frame["block_tokens"] = frame["block_tokens"].fillna(0).astype(float)
    # Shares of evidence memories (den: memories); coverage and tokens per probe (den: probes).
    parts = [
        _cells(frame, list(STATES), ["memories"] * len(STATES), resamples, totals=("memories",)),
        _cells(frame, ["covered", "block_tokens"], ["one", "one"], resamples),
    ]
    if "ids" in counts:  # logs from before ids were counted have none: their rows leave these columns out
        frame["ids"] = counts["ids"].astype(float)
        for state in ID_STATES:
            frame[f"id_{state}"] = counts[f"ids_{state}"].astype(float)
        frame["header_tokens"] = frame["block_tokens"] - counts["content_tokens"].astype(float)
        ids = [f"id_{state}" for state in ID_STATES]
        parts.append(_cells(frame, ids, ["ids"] * len(ids), resamples, totals=("ids",)))
        parts.append(_cells(frame, ["header_tokens"], ["block_tokens"], resamples))
    merged = []
    for rows in zip(*parts, strict=True):
        row: dict[str, Any] = {}
        for part in rows:
            row.update({key: value for key, value in part.items() if key not in row})
        merged.append(row)
    return pd.DataFrame(merged).rename(columns={"memories": "evidence_memories", "ids": "evidence_ids"})


def free_text_table(data: RunData, resamples: int = DEFAULT_RESAMPLES) -> pd.DataFrame:
    """Mean free-text score (token F1; abstention questions 0/1) and value-matching success per arm × budget
    × ttl policies × mechanism, over probes that carry a gold answer or expect an abstention in an
    imported task."""
    probes, tasks = data.probes, data.tasks
    if (
        "gold_answer" in probes
        and probes["gold_answer"].isna().all()
        and (tasks["written_ttl_policy"] == "").all()
    ):
        return pd.DataFrame()  # no gold answer and no imported task (a generated run): nothing to score
    frame = probe_frame(data)
    if frame.empty:
        return pd.DataFrame()
    imported = frame["written_ttl_policy"] != ""
    scored = frame[frame["gold_answer"].notna() | (frame["abstain"].astype(bool) & imported)].copy()
    if scored.empty:
        return pd.DataFrame()
    scored["f1"] = [
        free_text_score(row.answer, row.gold_answer, abstain=bool(row.abstain), mechanism=row.mechanism)
        for row in scored.itertuples()
    ]
    scored["success"] = (scored["classification"] == "correct").astype(float)
    scored["one"] = 1.0
    return pd.DataFrame(_cells(scored, ["f1", "success"], ["one", "one"], resamples))


def _pct(row: pd.Series, name: str) -> str:
    value = row[name]
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    return f"{value * 100:.1f}% [{row[f'{name}_lo'] * 100:.1f}, {row[f'{name}_hi'] * 100:.1f}]"


def _tokens(row: pd.Series, name: str) -> str:
    return f"{row[name]:,.0f} [{row[f'{name}_lo']:,.0f}, {row[f'{name}_hi']:,.0f}]"


def _cell_label(row: pd.Series) -> list[str]:
    budget = "–" if row["budget_tokens"] < 0 else f"{row['budget_tokens']:,}"
    return [f"`{row['arm']}`", budget, row["arm_ttl_policy"] or "–", row["written_ttl_policy"] or "–"]


LABELS = ["arm", "budget", "arm ttl policy", "written ttl policy", "mechanism"]


def _table(title: str, intro: str, columns: list[str], rows: list[list[str]]) -> list[str]:
    """A report section: its title, one paragraph, and a table of the cell labels plus `columns`."""
    header = [*LABELS, *columns]
    return [
        title,
        "",
        intro,
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(cells) + " |" for cells in rows),
        "",
    ]


def render_section(evidence: pd.DataFrame, free_text: pd.DataFrame) -> list[str]:
    """The report.md lines for the tables ([] when the run has no imported probes)."""
    lines: list[str] = []
    if not evidence.empty:
        lines += _table(
            "## Evidence retention",
            "Of the task's writes that carry a probe's evidence (dialog ids), the share injected at the "
            "probe, still stored but not injected, forgotten, and never stored; coverage = probes whose "
            "evidence reached at least one write. Ratios of sums over probes; 95% CIs from a bootstrap over "
            "tasks (one conversation each). Model-free: it depends on the arm, budget and ttls, not on the "
            "model.",
            [
                "probes",
                "evidence memories",
                "injected",
                "stored, not injected",
                "forgotten",
                "not stored",
                "coverage",
                "block tokens/probe",
            ],
            [
                [
                    *_cell_label(row),
                    row["mechanism"],
                    f"{row['probes']}",
                    f"{row['evidence_memories']}",
                    *(_pct(row, state) for state in STATES),
                    _pct(row, "covered"),
                    _tokens(row, "block_tokens"),
                ]
                for _, row in evidence.iterrows()
            ],
        )
    if not evidence.empty and "evidence_ids" in evidence:
        lines += _table(
            "### Evidence retention per dialog id",
            "The same probes counted per evidence id, as published retrieval results count: an id is "
            "injected when a memory carrying it was, and so on; `no memory` = no memory carries the id at "
            "all (no observation was drawn from that dialog turn). Line overhead = the share of the block's "
            "tokens that are line headers and the block title, not the injected memories' own text.",
            [
                "evidence ids",
                "injected",
                "stored, not injected",
                "forgotten",
                "not stored",
                "no memory",
                "line overhead",
            ],
            [
                [
                    *_cell_label(row),
                    row["mechanism"],
                    f"{row['evidence_ids']:.0f}",
                    *(_pct(row, f"id_{state}") for state in ID_STATES),
                    _pct(row, "header_tokens"),
                ]
                for _, row in evidence.iterrows()
            ],
        )
    if not free_text.empty:
        lines += _table(
            "## Free-text answers",
            "Token F1 against the dataset's gold answer (LoCoMo's normalisation without stemming; multi-hop "
            "answers part by part; questions that expect an abstention score 1 for one), beside the "
            "value-matching success (the gold answer found verbatim in the answer). 95% CIs as above.",
            ["probes", "token F1", "success"],
            [
                [
                    *_cell_label(row),
                    row["mechanism"],
                    f"{row['probes']}",
                    _pct(row, "f1"),
                    _pct(row, "success"),
                ]
                for _, row in free_text.iterrows()
            ],
        )
    return lines
