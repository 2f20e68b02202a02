"""The reports package's one error type: bad or incomplete input (run folder, summary file, CLI spec)."""

from __future__ import annotations


class ReportInputError(ValueError):
    """One-line message naming the file (and line/field when known); the CLI maps it to exit code 2."""
