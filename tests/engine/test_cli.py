"""`dsh-memory-forget` end to end on a SQLite file in a temp dir, the time read from a `--clock-file` where it
matters. Each call goes through `run` (what the console script calls) in this process with a hermetic
environment; the tests about the process boundary (state across processes, a terminal on standard input)
start a fresh process per call."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from importlib import metadata
from pathlib import Path
from unittest import mock

import pytest

import amnesia
from amnesia.cli import iso_utc, run

ROOT = Path(__file__).resolve().parents[2]


class Cli:
    """Calls the CLI on `tmp_path/memory.db`: in this process (a fresh process per call if `fresh_process`),
    with `env` as the whole environment, from the repository root."""

    def __init__(self, tmp_path: Path, fresh_process: bool = False) -> None:
        self.db = tmp_path / "memory.db"
        self.fresh_process = fresh_process
        # Hermetic: no AMNESIA_* from the caller, and a HOME where the default db path would be harmless.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("AMNESIA_")} | {
            "HOME": str(tmp_path)
        }

    def run(
        self, *args: str, db: bool = True, stdin: str | bytes | None = None
    ) -> subprocess.CompletedProcess[str]:
        argv = [*(["--db", str(self.db)] if db else []), *args]
        if self.fresh_process:
            command = [sys.executable, "-m", "amnesia.cli", *argv]
            return subprocess.run(
                command, capture_output=True, text=True, cwd=ROOT, env=self.env, timeout=60, input=stdin
            )
        data = stdin.encode() if isinstance(stdin, str) else stdin
        out, err = io.StringIO(), io.StringIO()
        with (
            mock.patch.dict(os.environ, self.env, clear=True),
            mock.patch.object(
                sys, "stdin", sys.stdin if data is None else io.TextIOWrapper(io.BytesIO(data))
            ),
            redirect_stdout(out),
            redirect_stderr(err),
        ):
            cwd = Path.cwd()
            os.chdir(ROOT)
            try:
                code = run(argv)
            finally:
                os.chdir(cwd)
        return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())

    def ok(self, *args: str, stdin: str | None = None) -> str:
        result = self.run(*args, stdin=stdin)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def json(self, *args: str, stdin: str | None = None) -> dict:
        return json.loads(self.ok("--json", *args, stdin=stdin))


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


@pytest.fixture
def cli_process(tmp_path: Path) -> Cli:
    return Cli(tmp_path, fresh_process=True)


def assert_bad_input(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


class ClockFile:
    """The time the CLI reads through `--clock-file`: the test moves it; nothing waits on the wall clock."""

    def __init__(self, path: Path, start: float = 1_767_225_600.0) -> None:  # 2026-01-01T00:00:00Z
        self.path = path
        self.now = start
        self.path.write_text(str(start))

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.path.write_text(str(self.now))

    def args(self) -> tuple[str, str]:
        return ("--clock-file", str(self.path))


@pytest.fixture
def clock_file(tmp_path: Path) -> ClockFile:
    return ClockFile(tmp_path / "clock")


def test_stale_fact_dies_on_schedule_and_only_its_hash_stays(cli: Cli, clock_file: ClockFile) -> None:
    """Seed §14 through the CLI: lapsang (ttl 15 s) dies, oolong (600 s) lives, the audit keeps a hash."""
    at = clock_file.args()
    # flat curve: the item stays active until its ttl (ebbinghaus would turn it stale at 0.4 ttl).
    old = cli.json(*at, "remember", "The verification drink is lapsang.", "--ttl", "15s", "--curve", "flat")
    new = cli.json(*at, "remember", "The verification drink has changed to oolong.", "--ttl", "600s")
    status = cli.json(*at, "status")
    assert status["counts"]["active"] == 2
    assert status["next_expiry_at"] == clock_file.now + 15

    clock_file.advance(14.9)
    assert cli.json(*at, "status")["counts"]["active"] == 2  # not a moment early
    clock_file.advance(0.2)
    status = cli.json(*at, "status")
    assert status["counts"]["active"] == 1
    assert status["counts"]["forgotten"] == 1
    assert [p["id"] for p in cli.json(*at, "plugs")["items"]] == [new["id"]]

    entries = cli.json(*at, "audit", "--limit", "5")["entries"]
    assert [(e["item_id"], e["reason"]) for e in entries] == [(old["id"], "expired")]
    assert "lapsang" not in json.dumps(entries)
    assert "lapsang" not in cli.ok(*at, "audit")
    matches = cli.json(*at, "audit", "--verify", "The verification drink is lapsang.")["matches"]
    assert [m["item_id"] for m in matches] == [old["id"]]
    assert cli.json(*at, "audit", "--verify", "The verification drink is oolong.")["matches"] == []


def test_the_clock_file_is_refused_in_one_line_when_unreadable(cli: Cli, tmp_path: Path) -> None:
    assert_bad_input(
        cli.run("--clock-file", str(tmp_path / "missing"), "status"), "cannot read the clock file"
    )


def test_remember_recall_inspect_forget_across_processes(cli_process: Cli) -> None:
    out = cli_process.ok(
        "remember", "Answer in French.", "--ttl", "7d", "--kind", "preference", "--tag", "lang"
    )
    assert out.startswith("remembered m-")
    item_id = out.split()[1]

    assert item_id in cli_process.ok("recall", "French")
    detail = cli_process.json("inspect", item_id)
    assert (detail["kind"], detail["tags"], detail["ttl"]) == ("preference", ["lang"], 604_800.0)
    assert detail["access_count"] == 1  # the recall above renewed it

    assert cli_process.json("forget", "--tag", "lang")["ids"] == [item_id]
    assert cli_process.ok("plugs").strip() == "no live memories"
    assert cli_process.json("audit", "--since", "1h")["entries"][0]["reason"] == "manual"


def test_pin_key_supersession_and_preview(cli: Cli) -> None:
    pinned = cli.json("remember", "Never deploy on Fridays.", "--pin")
    assert pinned["pinned"] is True and pinned["ttl"] is None
    first = cli.json("remember", "The staging database is db-stage-2.", "--ttl", "7d", "--key", "staging-db")
    second = cli.json("remember", "The staging database is db-stage-3.", "--ttl", "7d", "--key", "staging-db")
    assert second["superseded"] == [first["id"]]

    plan = cli.json("preview", "--budget", "500")
    assert plan["items"][0]["id"] == pinned["id"]
    assert "db-stage-3" in plan["block"] and "db-stage-2" not in plan["block"]
    assert "AMNESIA MEMORY (2 items" in cli.ok("preview")
    assert cli.json("inspect", second["id"])["access_count"] == 0  # preview renews nothing


def test_preview_query_ranks_by_relevance_and_explains_each_rank(cli: Cli) -> None:
    drink = cli.json("remember", "The verification drink is oolong.", "--ttl", "30d")
    rota = cli.json("remember", "The deploy rota changes every Monday.", "--ttl", "30d")
    text = cli.ok("preview", "--query", "which drink?")  # the default strength order: the query is not used
    assert "(--query not used: injection_order is strength" in text
    assert text.index(rota["id"]) < text.index(drink["id"])
    cli.env["AMNESIA_INJECTION_ORDER"] = "relevance"
    plan = cli.json("preview", "--budget", "60", "--query", "which drink?")
    assert plan["order"] == "relevance" and [item["id"] for item in plan["items"]] == [drink["id"]]
    lines = cli.ok("preview", "--query", "which drink?").splitlines()
    assert lines[3].startswith(f"1. {drink['id']}: injected (fits") and "matched: drink" in lines[3]
    assert lines[4].startswith(f"2. {rota['id']}: injected") and "no query term matched" in lines[4]


def test_session_scope_promote_and_unplug(cli: Cli) -> None:
    keep = cli.json(
        "remember", "Root cause: the retry timer.", "--ttl", "1d", "--scope", "session", "--owner", "t1"
    )
    scratch = cli.json(
        "remember", "Tried rerunning twice.", "--ttl", "1d", "--scope", "session", "--owner", "t1"
    )
    assert cli.json("promote", keep["id"])["scope"] == "workspace"
    assert cli.json("forget", "--scope", "session", "--owner", "t1")["ids"] == [scratch["id"]]
    assert [p["id"] for p in cli.json("plugs")["items"]] == [keep["id"]]


def test_sweep_and_forget_all(cli: Cli, clock_file: ClockFile) -> None:
    at = clock_file.args()
    cli.ok(*at, "remember", "Short-lived note.", "--ttl", "1s")
    cli.ok(*at, "remember", "Long-lived note.", "--ttl", "1d")
    clock_file.advance(1.2)
    swept = cli.json(*at, "sweep")
    assert swept["by_reason"] == {"expired": 1}

    assert_bad_input(cli.run(*at, "forget", "--all"), "--yes")
    assert cli.json(*at, "status")["counts"]["active"] == 1  # nothing was deleted by the refused command
    assert cli.json(*at, "forget", "--all", "--yes")["count"] == 1


def test_restore_in_restorable_mode(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "amnesia.yaml"
    config.write_text("restorable: true\n")
    written = cli.json("--config", str(config), "remember", "Standup moved to 10:30.", "--ttl", "1d")
    cli.ok("--config", str(config), "forget", written["id"])
    assert_bad_input(cli.run("restore", written["id"]), "restor")  # restore needs restorable mode on
    restored = cli.json("--config", str(config), "restore", written["id"])
    assert restored["content"] == "Standup moved to 10:30." and restored["id"] != written["id"]


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (("remember", "x", "--ttl", "7x"), ("--ttl", "7x")),
        (("remember", "x", "--kind", "gossip"), ("gossip",)),
        (("remember", "", "--ttl", "1d"), ()),
        (("remember", "x", "--pin", "--ttl", "1d"), ("--ttl", "pin")),
        (("forget",), ("forget",)),
        (("inspect", "m-nope"), ("m-nope",)),
        (("inspect",), ("ID",)),
        (("audit", "--limit", "0"), ("--limit",)),
        (("audit", "--since", "soon"), ("--since",)),
        (("frobnicate",), ("frobnicate",)),
        (("--config", "/nonexistent/amnesia.yaml", "status"), ("amnesia.yaml",)),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], fragments: tuple[str, ...]
) -> None:
    """In process through `run` (what the console script calls) to keep this matrix fast."""
    db = str(tmp_path / "memory.db")
    code = run(["--db", db, *args])
    out, err = capsys.readouterr()
    assert_bad_input(subprocess.CompletedProcess(args, code, out, err), *fragments)
    if Path(db).exists():
        assert run(["--json", "--db", db, "status"]) == 0
        assert json.loads(capsys.readouterr().out)["counts"]["active"] == 0


def test_a_refused_secret_is_one_line_and_never_echoed(cli: Cli) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    result = cli.run("remember", f"my token is {secret}", "--ttl", "1d")
    assert_bad_input(result, "rule")
    assert secret not in result.stderr + result.stdout
    assert cli.json("status")["counts"]["active"] == 0


def test_a_bad_config_line_is_named(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "amnesia.yaml"
    config.write_text("restorable: true\nstale_strength: 2\n")
    assert_bad_input(cli.run("--config", str(config), "status"), "amnesia.yaml:2", "stale_strength")


def test_db_defaults_to_env_then_home(cli: Cli, tmp_path: Path) -> None:
    env_db = tmp_path / "from-env.db"
    cli.env["AMNESIA_DB"] = str(env_db)
    assert cli.run("remember", "Env db note.", "--ttl", "1d", db=False).returncode == 0
    assert env_db.exists()
    del cli.env["AMNESIA_DB"]
    assert cli.run("status", db=False).returncode == 0
    assert (tmp_path / ".amnesia" / "memory.db").exists()


def test_help_and_no_arguments_exit_0(cli: Cli) -> None:
    for args in ((), ("--help",), ("audit", "--help")):
        result = cli.run(*args, db=False)
        assert result.returncode == 0
        assert "Usage" in result.stdout
    assert "--verify" in cli.run("audit", "--help", db=False).stdout


ISO_UTC = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def test_forgetting_an_unknown_id_is_one_line_exit_2(cli: Cli) -> None:
    kept = cli.json("remember", "The lab opens at eight.", "--ttl", "1d")
    assert_bad_input(cli.run("forget", "m-nope"), "m-nope", "no live memory")
    assert cli.json("forget", kept["id"])["ids"] == [kept["id"]]
    assert_bad_input(cli.run("forget", kept["id"]), kept["id"])  # forgotten already
    assert [entry["item_id"] for entry in cli.json("audit")["entries"]] == [kept["id"]]


def test_a_db_in_a_missing_folder_needs_create(cli: Cli, tmp_path: Path) -> None:
    nested = tmp_path / "typo" / "deeper" / "memory.db"
    result = cli.run("--db", str(nested), "remember", "Lost note.", "--ttl", "1d", db=False)
    assert_bad_input(result, "does not exist", "--create")
    assert not (tmp_path / "typo").exists()
    cli.env["AMNESIA_DB"] = str(nested)  # the same rule for a path from the environment
    assert_bad_input(cli.run("status", db=False), "does not exist")
    del cli.env["AMNESIA_DB"]
    created = cli.run("--db", str(nested), "--create", "remember", "Found note.", "--ttl", "1d", db=False)
    assert created.returncode == 0, created.stderr
    assert nested.exists()
    assert "Found note." in cli.ok("--db", str(nested), "plugs")  # an existing folder needs no --create


def test_inspect_and_status_print_iso_utc_times_with_their_age(cli: Cli) -> None:
    written = cli.json("remember", "The release is on Thursday.", "--ttl", "2d", "--key", "release")
    cli.ok("remember", "The release is on Friday.", "--ttl", "2d", "--key", "release")  # supersedes it
    cli.ok("preview")
    text = cli.ok("inspect", cli.json("plugs")["items"][0]["id"])
    fields = dict(line.split(": ", 1) for line in text.splitlines())
    for name in ("created_at", "last_accessed_at", "expires_at", "stale_at"):
        assert re.fullmatch(ISO_UTC + r" \((now|\S+ ago|in \S+)\)", fields[name]), (name, fields[name])
    assert re.fullmatch(ISO_UTC + r" \(in 1d23h\d+m\d+s\)", fields["expires_at"]), fields["expires_at"]
    assert (fields["ttl"], fields["hard_expires_at"]) == ("2d", "None")
    assert re.fullmatch(r"1d23h\d+m\d+s", fields["remaining"])
    status = cli.ok("status")
    assert re.search(rf"^next expiry: {ISO_UTC} \(in 1d23h", status, re.MULTILINE), status
    assert re.search(rf"^forgot {written['id']} \(superseded\) at {ISO_UTC} \(", status, re.MULTILINE)
    for output in (text, status):
        assert not re.search(r"\d{9,}\.\d", output), output  # no raw epoch seconds left


def test_iso_utc_falls_back_to_the_number_when_no_date_has_it() -> None:
    assert iso_utc(0.0) == "1970-01-01T00:00:00Z"
    assert iso_utc(1e300) == "1e+300"


def test_version_comes_from_the_installed_metadata_or_the_package(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r'^version = "([^"]+)"$', pyproject, re.MULTILINE).group(1)  # type: ignore[union-attr]
    assert amnesia.__version__ == declared
    result = cli.run("--version", db=False)
    assert (result.returncode, result.stdout) == (0, f"dsh-memory-forget {declared}\n")

    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    monkeypatch.setattr(amnesia, "__version__", "9.9.9-source")
    assert run(["--version"]) == 0
    assert capsys.readouterr().out == "dsh-memory-forget 9.9.9-source\n"


def test_remember_dash_reads_the_content_from_standard_input(cli: Cli) -> None:
    written = cli.json("remember", "-", "--ttl", "1d", stdin="  The coffee machine is on floor 2.\n")
    assert (
        written["id"] and cli.json("inspect", written["id"])["content"] == "The coffee machine is on floor 2."
    )
    assert_bad_input(cli.run("remember", "-", stdin=""), "content")
    undecodable = cli.run("remember", "-", stdin=b"caf\xe9")
    assert undecodable.returncode == 2 and "not UTF-8" in undecodable.stderr
    assert len(cli.json("plugs")["items"]) == 1


def test_remember_dash_refuses_a_terminal_instead_of_waiting(cli_process: Cli) -> None:
    controller, terminal = os.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "amnesia.cli", "--db", str(cli_process.db), "remember", "-"],
            stdin=terminal,
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=cli_process.env,
            timeout=60,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert_bad_input(result, "standard input")


def test_recall_reaches_a_team_note_with_team_only(cli: Cli) -> None:
    """Seed §6.10 through the CLI: `--team T` adds team T's memories; a session of the same name does not."""
    note = cli.json(
        "remember", "Atlas writes to kestrel.", "--ttl", "2d", "--scope", "team", "--owner", "atlas"
    )
    assert cli.json("recall", "kestrel", "--owner", "atlas")["items"] == []
    assert [p["id"] for p in cli.json("recall", "kestrel", "--team", "atlas")["items"]] == [note["id"]]


def test_every_engine_command_acts_in_the_workspace_it_is_given(cli: Cli) -> None:
    """Seed §10.2: one database, isolated workspaces; `audit --project X` is `audit --workspace X`."""
    ours = cli.json("remember", "Harbor office opens at nine.", "--ttl", "7d", "--workspace", "harbor")
    other = cli.json("remember", "Harbor office opens at ten.", "--ttl", "7d")
    assert [p["id"] for p in cli.json("plugs", "--workspace", "harbor")["items"]] == [ours["id"]]
    assert [p["id"] for p in cli.json("recall", "harbor", "--workspace", "harbor")["items"]] == [ours["id"]]
    assert cli.json("inspect", ours["id"], "--workspace", "harbor")["id"] == ours["id"]
    assert_bad_input(cli.run("inspect", ours["id"]), ours["id"])  # not in the default workspace
    assert "opens at nine" in cli.json("preview", "--workspace", "harbor")["block"]
    assert cli.json("status", "--workspace", "harbor")["counts"]["active"] == 1
    assert cli.json("sweep", "--workspace", "harbor")["settled"] == 1
    assert cli.json("forget", "--all", "--yes", "--workspace", "harbor")["ids"] == [ours["id"]]
    assert [e["item_id"] for e in cli.json("audit", "--project", "harbor")["entries"]] == [ours["id"]]
    assert [e["item_id"] for e in cli.json("audit", "--workspace", "harbor")["entries"]] == [ours["id"]]
    assert cli.json("audit")["entries"] == []
    assert [p["id"] for p in cli.json("plugs")["items"]] == [other["id"]]


@pytest.mark.parametrize(
    ("value", "fragment"),
    [("", "expected a name"), (" ", "expected a name"), ("w" * 129, "at most 128"), ("a\tb", "control")],
)
def test_a_bad_workspace_name_is_one_line_exit_2(cli: Cli, value: str, fragment: str) -> None:
    assert_bad_input(cli.run("status", "--workspace", value), "--workspace", fragment)
    assert_bad_input(cli.run("audit", "--project", value), "--workspace", fragment)
    assert not cli.db.exists()  # refused before the store was opened


def test_a_default_ttl_of_zero_keeps_a_memory_without_a_ttl(
    cli: Cli, clock_file: ClockFile, tmp_path: Path
) -> None:
    config = tmp_path / "amnesia.yaml"
    config.write_text("default_ttl: 0\n")
    at = ("--config", str(config), *clock_file.args())
    assert "no ttl, never expires" in cli.ok(*at, "remember", "The office is on the third floor.")
    clock_file.advance(10 * 365 * 86_400)
    assert cli.json(*at, "status")["counts"]["active"] == 1


def test_a_recall_through_the_cli_revives_a_due_memory(cli: Cli, clock_file: ClockFile) -> None:
    at = clock_file.args()
    view = cli.json(*at, "remember", "The descaler is under the sink.", "--ttl", "10s", "--curve", "flat")
    clock_file.advance(11)
    (hit,) = cli.json(*at, "recall", "descaler")["items"]
    assert (hit["id"], hit["status"]) == (view["id"], "active")
    assert cli.json(*at, "audit")["entries"] == []
