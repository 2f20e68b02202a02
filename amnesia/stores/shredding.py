"""Crypto-shredding for the SQLite store: each memory is stored sealed under a key of its own, and forgetting
it overwrites that key with zeros, so every copy of the sealed bytes SQLite may have left behind (in the
unused gap of a rebuilt page, in a freed cell, in an old WAL frame) is unreadable from then on.

The cipher is a stream cipher from the standard library: the keystream is SHAKE-256(key ‖ nonce), an
extendable-output sponge keyed by a 32-byte random key (the keyed-sponge construction that KMAC also
builds on), XORed with the plaintext. Every sealing draws a fresh 16-byte random nonce, stored in front of
the ciphertext, so a memory re-saved under the same key (a touch, a status change) never reuses a keystream.
There is no authentication tag: the purpose is that forgotten content cannot be read back, not that the file
cannot be edited (whoever can write the database can already change or delete what it holds).
"""

from __future__ import annotations

import hashlib
import secrets

KEY_BYTES = 32
NONCE_BYTES = 16
FREE_KEY = bytes(KEY_BYTES)  # a key slot that holds no key (never drawn: the chance is 2^-256)


def new_key() -> bytes:
    """A fresh random content key."""
    return secrets.token_bytes(KEY_BYTES)


def _xor_keystream(data: bytes, key: bytes, nonce: bytes) -> bytes:
    stream = hashlib.shake_256(key + nonce).digest(len(data))
    # One big-integer XOR instead of a Python loop over the bytes: about 2 µs for a 2 KB memory.
    return (int.from_bytes(data, "little") ^ int.from_bytes(stream, "little")).to_bytes(len(data), "little")


def seal(key: bytes, plaintext: bytes) -> bytes:
    """`plaintext` encrypted under `key` with a fresh nonce: nonce ‖ ciphertext (same length as the text)."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    return nonce + _xor_keystream(plaintext, key, nonce)


def unseal(key: bytes, sealed: bytes) -> bytes:
    """The plaintext that `seal(key, ...)` sealed."""
    return _xor_keystream(sealed[NONCE_BYTES:], key, sealed[:NONCE_BYTES])
