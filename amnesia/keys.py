"""Where a SQLite store's audit key lives: outside the database, so that whoever holds the database file alone
cannot test guesses of short forgotten content against the audit's keyed hashes.

The key of a store is found, in this order:

1. `AMNESIA_AUDIT_KEY`: the key itself, as hex (at least 32 digits); never written anywhere.
2. `AMNESIA_AUDIT_KEY_FILE`: a file holding the key as hex; created (mode 0600) if it does not exist.
3. `$XDG_CONFIG_HOME/amnesia/audit-keys/<store id>.key` (default `~/.config/amnesia/audit-keys/`), created
   with mode 0600 in a 0700 folder. The store id is a random, non-secret name recorded in the database.

The database keeps only its store id and a check value (an HMAC of a fixed text under the key), so opening it
with the wrong key or without its key fails with a one-line error instead of answering every `verify` with
"never forgotten". Errors name the variable or file, never the key. A key file that its group or others may
read is used, with one warning line on stderr (once per file and process) naming it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from amnesia.checks import shown
from amnesia.errors import InvalidInput

KEY_ENV = "AMNESIA_AUDIT_KEY"
KEY_FILE_ENV = "AMNESIA_AUDIT_KEY_FILE"
MIN_KEY_BYTES = 16
_CHECK_TEXT = b"amnesia audit key check v1"


def key_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The folder of the default per-store key files."""
    env = os.environ if environ is None else environ
    config_home = env.get("XDG_CONFIG_HOME") or str(Path("~/.config").expanduser())
    return Path(config_home) / "amnesia" / "audit-keys"


def key_location(store_id: str, environ: Mapping[str, str] | None = None) -> Path:
    """The key file of the store `store_id`: `$AMNESIA_AUDIT_KEY_FILE`, else its file in `key_folder()`."""
    env = os.environ if environ is None else environ
    named = env.get(KEY_FILE_ENV)
    return Path(named).expanduser() if named else key_folder(env) / f"{store_id}.key"


def key_from_env(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The key given in `$AMNESIA_AUDIT_KEY`, or None when it is not set."""
    env = os.environ if environ is None else environ
    text = env.get(KEY_ENV)
    return None if text is None else _parse(text, f"env {KEY_ENV}")


def existing_key(store_id: str, environ: Mapping[str, str] | None = None) -> tuple[bytes, str]:
    """The key of the existing store `store_id` and where it came from (for error messages)."""
    from_env = key_from_env(environ)
    if from_env is not None:
        return from_env, f"env {KEY_ENV}"
    location = key_location(store_id, environ)
    return read_key(location), shown(location)


def new_store_id() -> str:
    """A fresh store id: 16 random hex digits (not secret: it only names the key file)."""
    return secrets.token_hex(8)


def key_check(key: bytes) -> str:
    """The check value the database keeps: proves a key is the store's without revealing it."""
    return hmac.new(key, _CHECK_TEXT, hashlib.sha256).hexdigest()


def read_key(path: Path) -> bytes:
    """The key in the file `path` (one-line InvalidInput when it is missing or unreadable)."""
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise InvalidInput(
            f"audit key: {shown(path)} is missing; restore it, or set {KEY_FILE_ENV} (or {KEY_ENV}) to this "
            "store's key"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput(f"audit key: cannot read {shown(path)} ({error.__class__.__name__})") from None
    key = _parse(text, shown(path))
    _warn_if_exposed(path)
    return key


_WARNED: set[str] = set()  # the exposed key files warned about in this process


def _warn_if_exposed(path: Path) -> None:
    """One stderr line, once per file and process, when the key file's group or others may read or write
    it: whoever reads it can test guesses of forgotten content against the audit's hashes."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return
    if mode & 0o077 and str(path) not in _WARNED:
        _WARNED.add(str(path))
        print(
            f"warning: audit key: {shown(path)} is open to its group or others (mode {mode:04o}); "
            "chmod 600 it",
            file=sys.stderr,
        )


def write_key(path: Path, key: bytes) -> None:
    """Store `key` in the file `path`; if the file exists already it must hold this very key."""
    if not _create(path, key) and read_key(path) != key:
        raise InvalidInput(
            f"audit key: {shown(path)} already holds a different key; point {KEY_FILE_ENV} at a new file"
        )


def read_or_create_key(path: Path) -> bytes:
    """The key in `path`, or a new random one written there when the file does not exist yet."""
    if not path.exists():
        _create(path, secrets.token_bytes(32))  # if another process wins the race, its key is the one read
    return read_key(path)


def _create(path: Path, key: bytes) -> bool:
    """Write `key` to a new file `path` (mode 0600, folders 0700); False if the file exists. The file appears
    whole or not at all: written aside, synced, then hard-linked into place (which never overwrites)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        aside = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(key.hex() + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.link(aside, path)
        except FileExistsError:
            return False
        finally:
            aside.unlink(missing_ok=True)
    except OSError as error:
        raise InvalidInput(f"audit key: cannot write {shown(path)} ({error.__class__.__name__})") from None
    return True


def _parse(text: str, origin: str) -> bytes:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        key = b""
    if len(key) < MIN_KEY_BYTES:
        raise InvalidInput(f"audit key: {origin}: expected at least {2 * MIN_KEY_BYTES} hex digits")
    return key
