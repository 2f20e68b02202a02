"""Bad input, fuzzed: durations, config files, task YAML, both CLIs' arguments and the tool dispatcher's JSON.
Whatever comes in: no traceback, a one-line error (exit 2 at a CLI), and nothing half-written."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, InvalidInput, SimulatedClock
from amnesia.cli import run as memory_cli
from amnesia.durations import MAX_DURATION_SECONDS, parse_duration
from amnesia.tools import TOOLS, call_tool
from amnesia_bench.cli import run as bench_cli
from tasks.load import read_task_set

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CLI_FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
NASTY_TEXT = st.sampled_from(
    [
        "",
        " ",
        "-1d",
        "1e400",
        "nan",
        "0",
        "7d",
        "1w2d",
        "10000000w",
        "\x00",
        "\ud800",
        "--",
        "x" * 3000,
        "密码",
    ]
) | st.text(max_size=40)


def _one_line(message: str) -> bool:
    # splitlines, not "\n": \r, \x85 and \u2028 break a terminal line (or a log parser's) just the same
    return bool(message.strip()) and len(message.strip().splitlines()) == 1 and "Traceback" not in message


# --------------------------------------------------------------------------------------------- durations
@FUZZ
@given(value=VALUES)
def test_parse_duration_returns_seconds_or_a_one_line_error_naming_the_field(value: Any) -> None:
    try:
        seconds = parse_duration(value, field="ttl")
    except ValueError as error:
        assert str(error).startswith("ttl: ") and _one_line(str(error))
    else:
        assert 0 <= seconds <= MAX_DURATION_SECONDS


# --------------------------------------------------------------------------------------------- config
CONFIG_KEYS = [*Config().to_dict(), "unknown_key", "amnesia"]


@FUZZ
@given(
    data=st.dictionaries(st.sampled_from(CONFIG_KEYS), VALUES | NASTY_TEXT, max_size=4),
    suffix=st.sampled_from([".yaml", ".toml"]),
)
def test_config_files_load_or_fail_with_one_line_naming_the_file(data: dict[str, Any], suffix: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"config{suffix}"
        try:
            path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        except (yaml.YAMLError, UnicodeEncodeError):
            return  # not representable as a file; nothing to feed the loader
        try:
            config = Config.from_file(path)
        except InvalidInput as error:
            assert str(error).startswith(str(path)) and _one_line(str(error))
        else:
            config.validate()


@FUZZ
@given(text=st.text(max_size=200))
def test_config_files_of_arbitrary_text_never_crash_the_loader(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for suffix in (".yaml", ".toml"):
            path = Path(folder) / f"config{suffix}"
            path.write_bytes(text.encode("utf-8", "surrogatepass"))
            try:
                Config.from_file(path)
            except InvalidInput as error:
                assert _one_line(str(error))


# --------------------------------------------------------------------------------------------- task YAML
def _mutate(document: Any, path: list[int], replacement: Any) -> Any:
    """Replace one node of a nested task dict (chosen by `path`, indexes taken modulo the size)."""
    if not path or not isinstance(document, (dict, list)) or not document:
        return replacement
    keys = list(document) if isinstance(document, dict) else list(range(len(document)))
    key = keys[path[0] % len(keys)]
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[key] = _mutate(document[key], path[1:], replacement)
    return copy


def _check_task_file(path: Path) -> None:
    _, errors = read_task_set(path)
    for error in errors:
        assert _one_line(str(error)) and str(error).startswith(str(path))


@FUZZ
@given(path=st.lists(st.integers(0, 20), max_size=8), replacement=VALUES | NASTY_TEXT)
# Field names come from YAML keys: these used to print two-line errors, and random generation found them
# only now and then, so they are always tried.
@example(path=[], replacement={"bad\nkey": 1})
@example(path=[4, 0, 0, 0], replacement={"line\u2028separator\r": "x"})
@example(path=[4, 2, 1, 0, 1], replacement={"expect\x85": ["a\nb"]})
def test_task_loader_reports_every_mutation_as_file_line_field_problem(
    drink_task, path: list[int], replacement: Any
) -> None:
    document = _mutate(drink_task, path, replacement)
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "task.yaml"
        try:
            file.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
        except (yaml.YAMLError, UnicodeEncodeError):
            return
        _check_task_file(file)


@FUZZ
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_task_loader_survives_arbitrary_bytes(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "task.yaml"
        file.write_bytes(raw)
        _check_task_file(file)


# --------------------------------------------------------------------------------------------- tool JSON
TOOL_FIELDS = sorted({f for t in TOOLS for f in t["function"]["parameters"]["properties"]} | {"owner", "x"})


def _tool_engine() -> Amnesia:
    engine = Amnesia(store=InMemoryStore(secret=b"s" * 32), clock=SimulatedClock(1_000.0))
    engine.remember("The deploy window is Tuesday.", ttl="7d", tags=["deploy"])
    return engine


def _store_state(engine: Amnesia) -> tuple[Any, ...]:
    return tuple(sorted(json.dumps(i.to_dict(), sort_keys=True) for i in engine.store.load_items("default")))


@FUZZ
@given(
    name=st.sampled_from([t["function"]["name"] for t in TOOLS] + ["amnesia_nope", ""]),
    arguments=st.dictionaries(st.sampled_from(TOOL_FIELDS), VALUES | NASTY_TEXT, max_size=4)
    | st.text(max_size=60)
    | VALUES,
    sub_agent=st.booleans(),
)
def test_tool_dispatcher_answers_every_call_and_refusals_change_nothing(
    name: str, arguments: Any, sub_agent: bool
) -> None:
    engine = _tool_engine()
    before = _store_state(engine)
    payload = arguments if isinstance(arguments, (str, dict)) else json.dumps(arguments)
    result = call_tool(
        engine, name, payload, owner_id="s1" if sub_agent else None, include_workspace=not sub_agent
    )
    assert isinstance(result, dict)
    json.dumps(result, ensure_ascii=False)  # always JSON-able for the tool message
    if "error" in result:
        assert _one_line(result["error"])
        if name != "amnesia_forget":
            assert _store_state(engine) == before


# --------------------------------------------------------------------------------------------- both CLIs
def _invoke(cli: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(argv)
    return code, out.getvalue(), err.getvalue()


def _db_state(db: Path) -> tuple[Any, ...]:
    if not db.exists():
        return ()
    connection = sqlite3.connect(db)
    try:
        items = connection.execute("SELECT id, data FROM items ORDER BY id").fetchall()
        audit = connection.execute("SELECT item_id, reason FROM audit ORDER BY seq").fetchall()
    finally:
        connection.close()
    return tuple(items), tuple(audit)


MEMORY_COMMANDS = ["remember", "forget", "recall", "status", "audit", "preview", "sweep", "inspect", "plugs"]
MEMORY_OPTIONS = ["--ttl", "--kind", "--scope", "--owner", "--pin", "--tag", "--key", "--limit", "--since"]
MEMORY_OPTIONS += ["--budget", "--query", "--all", "--yes", "--verify", "--curve", "--supersedes", "--json"]
TOKENS = st.sampled_from(MEMORY_OPTIONS) | NASTY_TEXT.filter(lambda t: "\x00" not in t)


@pytest.fixture(scope="module")
def memory_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("cli") / "memory.db"
    code, _, err = _invoke(
        memory_cli, ["--db", str(db), "remember", "The harbor opens at six.", "--ttl", "7d"]
    )
    assert code == 0, err
    return db


@CLI_FUZZ
@given(command=st.sampled_from(MEMORY_COMMANDS), rest=st.lists(TOKENS, max_size=5))
def test_memory_cli_fuzzed_arguments_exit_0_or_one_line_exit_2_and_write_nothing_on_error(
    memory_db: Path, command: str, rest: list[str]
) -> None:
    before = _db_state(memory_db)
    code, _, err = _invoke(memory_cli, ["--db", str(memory_db), command, *rest])
    assert code in (0, 2), err
    if code == 2:
        assert err.startswith("error: ") and _one_line(err), err
        assert _db_state(memory_db) == before
    else:
        assert "Traceback" not in err


BENCH_VALUES = st.sampled_from(
    ["", "0", "-1", "x", "helpful", "all", "no-memory", "nope", "scripted", "gguf:x"]
)


@CLI_FUZZ
@given(
    command=st.sampled_from(["run", "validate", "generate", "report", "check", "compare", "nope"]),
    rest=st.lists(
        st.sampled_from(["--tasks", "--arms", "--model", "--seed", "--budget", "--workers", "--group", "--n"])
        | st.sampled_from(["--limit", "--set", "--arm-config", "--resume", "--bogus", "--seed=-3"])
        | BENCH_VALUES,
        max_size=5,
    ),
)
def test_bench_cli_fuzzed_arguments_never_traceback_and_bad_ones_write_nothing(
    write_tasks, drink_task, command: str, rest: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out"
        argv = [command]
        if command == "run":  # cheap defaults that the fuzzed arguments may override
            tiny = write_tasks(Path(folder) / "tasks", [drink_task])
            argv += ["--tasks", str(tiny), "--arms", "no-memory", "--no-progress", "--no-report"]
        argv += rest
        if command in ("run", "generate"):
            argv += ["--out", str(out)]
        code, _, err = _invoke(bench_cli, argv)
        if code == 0:
            return  # a valid combination: not this test's business
        assert code == 2, err
        assert err.startswith("error: ") and "Traceback" not in err, err
        assert not out.exists() or not any(out.rglob("*")), "a refused command left files behind"


# --------------------------------------------------------------------------------------------- named inputs
def _alias_bomb(levels: int = 9) -> str:
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def _file(folder: Path, name: str, content: str | bytes) -> str:
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(path)


TEN_MB = "# padding line for a ten megabyte file\n" * (10 * 1024 * 1024 // 40 + 1)
# (label, CLI, argv builder given a scratch folder, fragment the one-line error must contain)
NAMED: list[tuple[str, str, Callable[[Path], list[str]], str]] = [
    ("oversized content", "memory", lambda d: ["remember", "x" * 5000], "max_item_bytes"),
    (
        "invalid UTF-8 content",
        "memory",
        lambda d: ["remember", "bad \udcff\udcfe bytes"],
        "content: not valid UTF-8",
    ),
    ("huge ttl", "memory", lambda d: ["remember", "The harbor opens at six.", "--ttl", "9999999w"], "--ttl"),
    ("negative ttl", "memory", lambda d: ["remember", "The harbor opens at six.", "--ttl=-5m"], "--ttl"),
    ("zero ttl", "memory", lambda d: ["remember", "The harbor opens at six.", "--ttl", "0s"], "ttl"),
    ("pinned + ttl", "memory", lambda d: ["remember", "Keep this.", "--pin", "--ttl", "7d"], "pinned"),
    (
        "unknown scope",
        "memory",
        lambda d: ["remember", "The harbor opens at six.", "--scope", "galaxy"],
        "scope",
    ),
    ("session without owner", "memory", lambda d: ["remember", "Scratch.", "--scope", "session"], "owner_id"),
    ("secret", "memory", lambda d: ["remember", "password: hunter2hunter2"], "rule: password"),
    ("10 MB config", "memory", lambda d: ["--config", _file(d, "big.yaml", TEN_MB), "status"], "byte limit"),
    (
        "alias-bomb config",
        "memory",
        lambda d: ["--config", _file(d, "bomb.yaml", _alias_bomb()), "status"],
        "bomb",
    ),
    (
        "invalid UTF-8 config",
        "memory",
        lambda d: ["--config", _file(d, "c.yaml", b"default_ttl: \xff"), "status"],
        "c.yaml",
    ),
    (
        "not a database",
        "memory",
        lambda d: ["--db", _file(d, "x.db", b"garbage" * 99), "status"],
        "not an Amnesia",
    ),
    ("10 MB task file", "bench", lambda d: ["validate", _file(d, "big.yaml", TEN_MB)], "byte limit"),
    (
        "alias-bomb task file",
        "bench",
        lambda d: ["validate", _file(d, "bomb.yaml", _alias_bomb())],
        "alias bomb",
    ),
    (
        "invalid UTF-8 task file",
        "bench",
        lambda d: ["validate", _file(d, "t.yaml", b"- id: \xff\n")],
        "invalid UTF-8",
    ),
    (
        "deep nesting",
        "bench",
        lambda d: ["validate", _file(d, "deep.yaml", "[" * 5000 + "]" * 5000)],
        "nesting",
    ),
    (
        "alias-bomb run",
        "bench",
        lambda d: ["run", "--tasks", _file(d, "bomb.yaml", _alias_bomb())],
        "alias bomb",
    ),
    (
        "alias-bomb arm config",
        "bench",
        lambda d: ["run", "--arm-config", _file(d, "a.yaml", _alias_bomb())],
        "a.yaml",
    ),
    ("bad --set", "bench", lambda d: ["run", "--set", "amnesia.default_ttl=-1d"], "default_ttl"),
    ("unknown arm", "bench", lambda d: ["run", "--arms", "no-such-arm"], "unknown arm"),
    ("unknown option", "bench", lambda d: ["run", "--bogus"], "No such option"),
    (
        "--out under a file",
        "bench",
        lambda d: ["run", "--out", _file(d, "f", "x") + "/run", "--limit", "1"],
        "f/run",
    ),
]


@pytest.mark.parametrize(("label", "cli", "build", "fragment"), NAMED, ids=[n[0] for n in NAMED])
def test_named_bad_inputs_get_a_clear_one_line_refusal_and_write_nothing(
    tmp_path: Path, label: str, cli: str, build: Callable[[Path], list[str]], fragment: str
) -> None:
    db = tmp_path / "memory.db"
    argv = build(tmp_path)
    if cli == "memory":
        argv = argv if argv[0] == "--db" else ["--db", str(db), *argv]
        code, _, err = _invoke(memory_cli, argv)
    else:
        if argv[0] == "run":
            argv = (
                [*argv, "--tasks", "tasks", "--no-progress", "--no-report"] if "--tasks" not in argv else argv
            )
            argv = [*argv, "--out", str(tmp_path / "out")] if "--out" not in argv else argv
        code, _, err = _invoke(bench_cli, argv)
    assert code == 2, err
    first = err.splitlines()[0]
    assert first.startswith("error: ") and fragment in first and "Traceback" not in err, err
    assert _db_state(db) in ((), ((), ()))  # no item and no audit line (at most an empty schema)
    assert not (tmp_path / "out").exists()
