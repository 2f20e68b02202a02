"""docs/ARCHITECTURE.md shows the log schema the code writes and reads, not a hand-kept copy."""

from __future__ import annotations

from pathlib import Path

from tasks.logschema import RECORD_TYPES, schema_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "ARCHITECTURE.md"


def test_architecture_doc_carries_the_generated_schema_table():
    text = DOC.read_text(encoding="utf-8")
    between = text.split("<!-- schema:begin -->")[1].split("<!-- schema:end -->")[0]
    assert between.strip() == schema_markdown().strip(), "regenerate with: python -m tasks.logschema"


def test_schema_table_lists_every_record_type_once():
    rows = [line for line in schema_markdown().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(RECORD_TYPES)
