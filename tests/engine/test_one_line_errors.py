"""An error is one line whatever text it quotes: field names, ids, config keys and paths that carry line
breaks (newline, carriage return, U+2028 and the other characters str.splitlines breaks on) are shown
escaped, repr-style, by the engine, the tools, the config loader, the stores and the CLI."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InvalidInput, NotRestorable, SimulatedClock, SQLiteStore
from amnesia.checks import shown
from amnesia.cli import run as cli_run
from amnesia.tools import TOOL_NAMES, call_tool

BREAKS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029"]
AWKWARD = st.text(min_size=1, max_size=12) | st.sampled_from([f"a{br}b" for br in BREAKS])


def one_line(message: str) -> bool:
    return len(message.splitlines()) == 1


@given(AWKWARD)
def test_shown_is_one_line_and_bare_only_for_plain_words(text: str) -> None:
    display = shown(text)
    assert one_line(display)
    if display == text:
        assert text.isprintable() and not any(char.isspace() for char in text)
    else:
        assert ast.literal_eval(display) == text  # repr form: nothing lost


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(TOOL_NAMES), field=AWKWARD, value=st.none() | st.integers() | st.text(max_size=5))
def test_a_tool_call_with_any_field_name_gets_a_one_line_error(name: str, field: str, value: object) -> None:
    engine = Amnesia(clock=SimulatedClock(0.0))
    result = call_tool(engine, name, {field: value})
    if "error" in result:
        assert one_line(result["error"]), result["error"]


def test_the_tool_error_quotes_an_unknown_field_escaped_and_a_plain_one_bare() -> None:
    engine = Amnesia(clock=SimulatedClock(0.0))
    assert call_tool(engine, "amnesia_audit", {"\n": None})["error"].startswith("'\\n': unknown field")
    assert call_tool(engine, "amnesia_audit", {"colour": 1})["error"].startswith("colour: unknown field")


@pytest.mark.parametrize("breaking", BREAKS)
def test_config_keys_with_line_breaks_are_named_on_one_line(tmp_path: Path, breaking: str) -> None:
    key = f"stale{breaking}strength"
    yaml_file, toml_file = tmp_path / "amnesia.yaml", tmp_path / "amnesia.toml"
    quoted = json.dumps(key)  # \uXXXX escapes, which YAML and TOML double-quoted keys both read
    yaml_file.write_text(f"{quoted}: 0.2\n", encoding="utf-8")
    toml_file.write_text(f"{quoted} = 0.2\n", encoding="utf-8")
    for path in (yaml_file, toml_file):
        with pytest.raises(InvalidInput, match="unknown config key") as refused:
            Config.from_file(path)
        assert one_line(str(refused.value)) and repr(key) in str(refused.value)


def test_ids_with_line_breaks_are_quoted_in_engine_errors() -> None:
    ids = iter(["m-\u20281", "m-\n2", "m-3"])
    engine = Amnesia(config=Config(restorable=True), clock=SimulatedClock(0.0), id_factory=lambda: next(ids))
    first = engine.remember("The ferry leaves at seven.", key="ferry")
    engine.forget(first.id)
    assert engine.restore(first.id).id == "m-\n2"  # the user's memory, back under an awkward id
    with pytest.raises(NotRestorable, match="already restored") as again:
        engine.restore(first.id)
    with pytest.raises(InvalidInput, match="cannot supersede") as untrusted:
        engine.remember("The ferry leaves at ten.", key="ferry", source="auto")
    for refusal in (again, untrusted):
        assert one_line(str(refusal.value)) and repr("m-\n2") in str(refusal.value), str(refusal.value)


@pytest.mark.parametrize(
    ("command", "quoted"),
    [(["inspect", "m-\n1"], "m-\n1"), (["forget", "m-\u20282"], "m-\u20282"), (["status"], None)],
)
def test_the_cli_quotes_ids_and_paths_with_line_breaks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], quoted: str | None
) -> None:
    folder = tmp_path / ("no\nsuch" if quoted is None else "")
    assert cli_run(["--db", str(folder / "memory.db"), *command]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.endswith("\n") and one_line(err.rstrip("\n")), err
    assert repr(str(folder) if quoted is None else quoted) in err


def test_a_store_path_with_a_line_break_is_quoted(tmp_path: Path) -> None:
    junk = tmp_path / "not\na database.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InvalidInput) as refused:
        SQLiteStore(junk)
    assert one_line(str(refused.value)) and repr(str(junk)) in str(refused.value)
