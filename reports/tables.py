"""Every table of one report, as computed from the logs (`reports.build.tables_of`) and rendered
(`reports.markdown.render`, the CSV files): its own module so that the builder and the renderer both import it
and neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from reports.logread import RunData


@dataclass
class ReportTables:
    data: RunData
    per_task: pd.DataFrame
    summary: pd.DataFrame  # arm × group; group "all" = overall
    categories: pd.DataFrame
    paired_groups: pd.DataFrame
    paired_categories: pd.DataFrame
    stale_by_age: pd.DataFrame
    benefit: dict[str, Any]
    evidence: pd.DataFrame  # evidence retention (imported sets; empty otherwise)
    free_text: pd.DataFrame  # token F1 beside value matching (imported sets; empty otherwise)
    mechanisms: pd.DataFrame = field(default_factory=pd.DataFrame)  # arm × mechanism, probe rates only
    models: pd.DataFrame = field(default_factory=pd.DataFrame)  # model × arm × group, when several models ran
    paired_mechanisms: pd.DataFrame = field(default_factory=pd.DataFrame)
    paired_models: pd.DataFrame = field(default_factory=pd.DataFrame)

    def paired(self) -> pd.DataFrame:
        """Every paired table in one frame (paired.csv), with the breakdown it belongs to in `by`."""
        parts = [
            self.paired_groups.assign(by="group"),
            self.paired_categories.assign(by="category"),
            self.paired_mechanisms.assign(by="mechanism"),
            self.paired_models.assign(by="model"),
        ]
        parts = [p for p in parts if len(p.columns) > 1]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
