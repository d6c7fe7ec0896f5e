"""`<store>/.plur-desk/endorsements.jsonl`: signed statements "this key is this person's", one JSON object a line.

An endorsement counts only when its signature verifies with a key the reading user already trusts (app/trust/trust_file.py),
so the file may sit where agents write: a planted or altered line is simply not an endorsement. Lines are appended,
never rewritten. Shape (the signature covers every field but itself, as PLUR-HISTORY-CHAIN.md §1.1 canonical bytes):

    {"kind": "plur-desk/endorsement", "version": 1, "identity": "human:Bob", "public_key": "<SPKI DER, base64>",
     "by": "human:Alice", "at": "2026-12-06T19:00:00.000Z", "signature": "<Ed25519, base64>"}
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from plur_desk.store.history.chain import canonical_bytes, js_stringify
from plur_desk.store.safe_open import open_for_append, read_regular

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ENDORSEMENTS = Path(".plur-desk") / "endorsements.jsonl"
KIND = "plur-desk/endorsement"
MAX_BYTES = 4 * 1024 * 1024  # thousands of teammates' keys; anything larger is not an endorsement file


@dataclass(frozen=True)
class Endorsement:
    """One signed statement that `by` vouches for `identity`'s public key, as read from the file."""

    identity: str
    public_key: str
    by: str
    at: str
    line: int
    document: dict[str, object]  # as read: what the signature covers

    def verifies_with(self, public_key: str) -> bool:
        from plur_desk.store.keys.signatures import verify

        return verify(self.document, public_key)


def endorsement(identity: str, public_key: str, by: str, at: str, key: Ed25519PrivateKey) -> dict[str, object]:
    """A signed endorsement by `by` (holding `key`) of `public_key` as `identity`'s key."""
    doc: dict[str, object] = {"kind": KIND, "version": 1, "identity": identity, "public_key": public_key, "by": by}
    doc["at"] = at
    doc["signature"] = base64.b64encode(key.sign(canonical_bytes(doc))).decode("ascii")
    return doc


def read_endorsements(root: Path) -> tuple[list[Endorsement], str | None]:
    """The well-formed lines (verified later, against the reader's trust), and a problem with the file if any."""
    path = root / ENDORSEMENTS
    try:
        if os.stat(path).st_size > MAX_BYTES:
            return [], f"{ENDORSEMENTS} is larger than {MAX_BYTES} bytes; no endorsement in it was read"
        data, _st = read_regular(path)
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], f"{ENDORSEMENTS}: {exc}"
    found = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            doc = json.loads(raw) if raw.strip() else None
        except (ValueError, RecursionError):
            continue
        if not isinstance(doc, dict) or doc.get("kind") != KIND:
            continue
        fields = [doc.get(k) for k in ("identity", "public_key", "by", "at")]
        if all(isinstance(f, str) for f in fields) and isinstance(doc.get("signature"), str):
            identity, public_key, by, at = (str(f) for f in fields)
            found.append(Endorsement(identity, public_key, by, at, number, doc))
    return found, None


def append_endorsement(root: Path, doc: dict[str, object]) -> None:
    """One line, one write on an append descriptor (links leaving the store refused), synced."""
    path = root / ENDORSEMENTS
    path.parent.mkdir(exist_ok=True)
    fd = open_for_append(path, root)
    try:
        os.write(fd, (js_stringify(doc) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
