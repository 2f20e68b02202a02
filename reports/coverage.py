"""What a run left out: groups of the task set that `--limit` dropped entirely (the manifest's
`groups_left_out_by_limit`), so a report of a truncated run says so instead of looking complete."""

from __future__ import annotations

from reports.logread import RunData


def limit_note(data: RunData) -> list[str]:
    """report.md lines naming the groups `--limit` left out (none when nothing was left out)."""
    left_out = sorted({g for run in data.runs for g in run.manifest.get("groups_left_out_by_limit", [])})
    if not left_out:
        return []
    limits = sorted({str(run.manifest.get("limit")) for run in data.runs})
    covered = ", ".join(sorted(set(data.tasks["group"])))
    return [
        f"**Missing groups:** `--limit {'/'.join(limits)}` left out every task of group(s) "
        f"{', '.join(left_out)}; the tables cover {covered} only, and group `all` pools only those.",
        "",
    ]
