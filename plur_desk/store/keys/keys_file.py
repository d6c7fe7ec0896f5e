"""`<store-root>/keys.yaml`, PLUR's public key registry: `keys: [{identity, public_key, added_at}]`.

`public_key` is base64 of the Ed25519 SPKI DER. PLUR looks a signer up with the *first* entry of its identity, so
the key in force is always first; a rotated key stays below it with `retired_at`, a lost one with `revoked_at`
(extra fields PLUR keeps, as its registry is the parsed document). Written as js-yaml dumps it (PLUR's
`yaml.dump(..., {lineWidth: 120})`), temp file + rename; other entries keep their values.

PLUR's `registerPublicKey` rewrites this file (temp + rename) without any lock (PLUR-NEXT.md, from the signing PRs
#1136), so a registration of ours and one of PLUR's at the same moment could each drop the other. Our writes take
`keys.yaml.lock` (PLUR's protocol: excludes every plur_desk), build on the file as read just then, keep the file
each rename replaced and build again on it when it was not the one read (PLUR renamed in between), and read back
after: a PLUR rename that came after ours and dropped our entry makes us write it again.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from plur_desk.infra.errors import ActionRefused
from plur_desk.store.atomic import stage
from plur_desk.store.lists.yaml_dump import Dumper
from plur_desk.store.lists.yaml_load import YamlSyntaxError, load_general
from plur_desk.store.locking.lock import TENSIONS_POLICY, locked
from plur_desk.store.safe_open import read_store_file

KEYS_FILE = "keys.yaml"
KEYS_LIMIT = 4 << 20  # bytes: tens of thousands of keys
_DUMPER = Dumper(double_quotes=False, line_width=120)
ATTEMPTS = 5  # rounds of build, rename, read back before giving up (a writer that never stops)
T = TypeVar("T")


@dataclass(frozen=True)
class KeyEntry:
    """One reviewer key in keys.yaml, with when it was added, retired or revoked."""

    identity: str
    public_key: str
    added_at: str
    retired_at: str | None = None
    revoked_at: str | None = None

    @property
    def in_force(self) -> bool:
        return self.retired_at is None and self.revoked_at is None

    def valid_at(self, timestamp: str) -> bool:
        """Whether a signature made at `timestamp` (toISOString form) by this key counts: up to the instant it was
        retired (the rotation's own millisecond included), and strictly before it was revoked."""
        if self.revoked_at is not None and timestamp >= self.revoked_at:
            return False
        return self.retired_at is None or timestamp <= self.retired_at


@dataclass
class KeyRegistry:
    """keys.yaml as read: its entries, or why PLUR would not read it."""

    entries: list[KeyEntry] = field(default_factory=list)
    problem: str | None = None  # keys.yaml exists but is not a registry PLUR would read

    def for_identity(self, identity: str) -> list[KeyEntry]:
        return [e for e in self.entries if e.identity == identity]

    def current(self, identity: str) -> KeyEntry | None:
        """The entry PLUR would use (the first for the identity)."""
        found = self.for_identity(identity)
        return found[0] if found else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _load_document(root: Path) -> dict[str, object] | None:
    """The parsed registry; YamlSyntaxError (a message naming keys.yaml) for anything that is not one: a FIFO or
    other special file (never opened), a link out of the store, an oversized file, bytes that are not UTF-8."""
    path = root / KEYS_FILE
    try:
        data = read_store_file(path, root, KEYS_LIMIT)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise YamlSyntaxError(str(exc) if not exc.strerror else f"{KEYS_FILE}: {exc.strerror}") from None
    doc = load_general(_decode(data))
    if doc is None:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("keys"), list):
        raise YamlSyntaxError(f"{path} is not a keys registry (expected keys: [...])")
    return doc


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise YamlSyntaxError(f"{KEYS_FILE}, line {line}: not UTF-8 (byte {exc.start})", line) from None


def read_keys(root: Path) -> KeyRegistry:
    try:
        doc = _load_document(root)
    except (YamlSyntaxError, OSError, UnicodeDecodeError) as exc:
        return KeyRegistry(problem=str(exc))
    registry = KeyRegistry()
    items = doc.get("keys") if doc else []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        identity, key = _text(item.get("identity")), _text(item.get("public_key"))
        if identity is None or key is None:
            continue
        registry.entries.append(
            KeyEntry(
                identity,
                key,
                str(item.get("added_at", "")),
                _text(item.get("retired_at")),
                _text(item.get("revoked_at")),
            )
        )
    return registry


def _bytes(path: Path) -> bytes | None:
    """keys.yaml's bytes, read as a store file (never a FIFO, a link out of the store or an oversized file)."""
    try:
        return read_store_file(path, path.parent, KEYS_LIMIT)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ActionRefused(f"keys.yaml cannot be read, so no key was registered: {exc.strerror or exc}") from None


def _parse(root: Path, data: bytes | None) -> dict[str, object]:
    if data is None:
        return {"keys": []}
    try:
        doc = load_general(_decode(data))
    except YamlSyntaxError as exc:
        raise ActionRefused(f"keys.yaml cannot be read, so no key was registered: {exc}") from None
    if doc is None:
        return {"keys": []}
    if not isinstance(doc, dict) or not isinstance(doc.get("keys"), list):
        raise ActionRefused(f"{root / KEYS_FILE} is not a keys registry (expected keys: [...]); no key was registered")
    return copy.deepcopy(doc)


def _swap(path: Path, data: bytes) -> bytes | None:
    """Rename `data` over `path`; the bytes of the file the rename replaced (None when there was none). The old
    file is hard-linked aside just before the rename, so what a concurrent writer renamed in is not lost unseen."""
    staged = stage(path, [data])
    aside = path.with_name(f".{path.name}.replaced.{os.getpid()}.{id(staged)}")
    try:
        try:
            os.link(path, aside)
            had = True
        except FileNotFoundError:
            had = False
        staged.commit()
        return aside.read_bytes() if had else None
    finally:
        staged.discard()
        with suppress(FileNotFoundError):
            os.unlink(aside)


def _update(root: Path, change: Callable[[dict[str, object]], tuple[T, bool]]) -> T:
    """Apply `change` (it edits the document, and says what to return and whether it changed anything) so that no
    concurrent registration is lost, ours or PLUR's (see the module's docstring)."""
    path = root / KEYS_FILE
    with locked(path, TENSIONS_POLICY):
        expected = base = _bytes(path)
        for _ in range(ATTEMPTS):
            doc = _parse(root, base)
            result, changed = change(doc)
            if not changed and base == expected:
                return result  # what is on disk already holds the change
            data = _DUMPER.dump(doc).encode("utf-8")
            displaced = _swap(path, data)
            if displaced != expected:  # renamed in between our read and our rename: build on what it wrote
                base, expected = displaced, data
                continue
            after = _bytes(path)
            if after == data:
                return result
            base = expected = after  # renamed over ours since: make sure our change is in what is there now
    raise ActionRefused("keys.yaml kept changing while the key was registered; nothing is lost, try again")


def register_key(root: Path, identity: str, public_key: str, added_at: str) -> bool:
    """Add `identity`'s key when the identity has none. Returns False (and writes nothing) when it already has
    this key; raises ActionRefused when it has another one (replacing needs `replace_key`)."""

    def change(doc: dict[str, object]) -> tuple[bool, bool]:
        keys: list[object] = doc["keys"]  # type: ignore[assignment]
        for item in keys:
            if isinstance(item, dict) and item.get("identity") == identity:
                if item.get("public_key") == public_key:
                    return False, False
                raise ActionRefused(f"{identity} already has another key in keys.yaml; replacing it needs confirmation")
        keys.append({"identity": identity, "public_key": public_key, "added_at": added_at})
        return True, True

    return _update(root, change)


def replace_key(
    root: Path, identity: str, public_key: str, at: str, *, revoke: bool, revoked_from: str | None = None
) -> list[str]:
    """Make `public_key` the identity's key in force (first entry). Every older key of the identity stays, marked
    `retired_at` (signatures before `at` still count) or, with `revoke`, `revoked_at` = `revoked_from` or `at`
    (the instant from which its signatures no longer count; the epoch disowns everything it signed)."""

    def change(doc: dict[str, object]) -> tuple[list[str], bool]:
        before = copy.deepcopy(doc)
        old = _replaced(doc, identity, public_key, at, revoke, revoked_from)
        return old, doc != before

    return _update(root, change)


def _replaced(
    doc: dict[str, object], identity: str, public_key: str, at: str, revoke: bool, revoked_from: str | None
) -> list[str]:
    keys: list[object] = doc["keys"]  # type: ignore[assignment]
    mine: list[dict[str, object]] = [i for i in keys if isinstance(i, dict) and i.get("identity") == identity]
    old: list[str] = []
    for item in mine:
        if item.get("public_key") == public_key:
            continue
        old.append(str(item.get("public_key")))
        if "retired_at" not in item and "revoked_at" not in item:  # keys already retired keep their end
            item["revoked_at" if revoke else "retired_at"] = (revoked_from or at) if revoke else at
    fresh = {"identity": identity, "public_key": public_key, "added_at": at}
    kept = [i for i in mine if i.get("public_key") != public_key]
    ordered: list[object] = []
    for entry in keys:
        if not any(entry is m for m in mine):
            ordered.append(entry)
        elif entry is mine[0]:
            ordered += [fresh, *kept]
    if not mine:
        ordered.append(fresh)
    if (
        mine
        and mine[0].get("public_key") == public_key
        and all("retired_at" in i or "revoked_at" in i for i in mine[1:])
    ):
        return old  # already in force, every older key ended: nothing to write (a repeat after a lost race)
    doc["keys"] = ordered
    return old
