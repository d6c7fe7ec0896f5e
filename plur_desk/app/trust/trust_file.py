"""The keys this user trusts, kept outside every store (like git's allowed-signers or SSH's known_hosts): the user's
own key (recorded when the key vault hands it out) and keys trusted by hand after checking the fingerprint.

`<config dir>/trusted-keys.json`:

    {"schema_version": 1,
     "keys": [{"identity": "human:Alice", "public_key": "<SPKI DER, base64>", "fingerprint": "1a2b3c4d5e6f7a8b",
               "source": "own", "added_at": "2026-12-06T19:00:00.000Z"}, ...]}

`source` is "own" or "trusted". `distrusted` (same fields, no source) lists keys the user removed: an endorsement
never brings one back; trusting it by hand again does. Agents write the store, never this file; nothing from a store
is copied into it without the user naming the identity and its fingerprint.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from plur_desk.domain.trust import OWN, TRUSTED, TrustedKey, fingerprint
from plur_desk.infra.errors import ActionRefused
from plur_desk.infra.paths import config_dir
from plur_desk.store.atomic import atomic_write
from plur_desk.store.safe_open import read_regular

TRUST_FILE = "trusted-keys.json"
SCHEMA_VERSION = 1
MAX_BYTES = 4 * 1024 * 1024


class TrustFile:
    def __init__(self, directory: Path | None = None) -> None:
        self.path = (directory if directory is not None else config_dir()) / TRUST_FILE

    def stamp(self) -> tuple[int, int, int]:
        try:
            st = os.stat(self.path)
        except OSError:
            return (0, 0, 0)
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _document(self) -> dict[str, object]:
        """The file's document ({"keys": []} when absent); ActionRefused when it cannot be read as one."""
        try:
            if os.stat(self.path).st_size > MAX_BYTES:
                raise ActionRefused(f"{self.path} is larger than {MAX_BYTES} bytes; it is not a trust file")
            data, _st = read_regular(self.path)
        except FileNotFoundError:
            return {"schema_version": SCHEMA_VERSION, "keys": []}
        except OSError as exc:
            raise ActionRefused(f"{self.path} cannot be read: {exc}") from None
        try:
            doc = json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise ActionRefused(f"{self.path} is not valid JSON ({exc}); no key in it is trusted") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("keys"), list):
            raise ActionRefused(f'{self.path} is not a trust file (expected {{"keys": [...]}})')
        return doc

    def read(self) -> tuple[list[TrustedKey], str | None]:
        """The trusted keys, and what is wrong with the file (then nothing in it is trusted)."""
        try:
            doc = self._document()
        except ActionRefused as exc:
            return [], str(exc)
        found = []
        for item in _keys(doc):
            if not isinstance(item, dict):
                continue
            identity, key, source = item.get("identity"), item.get("public_key"), item.get("source")
            revoked = item.get("revoked_at")
            if isinstance(identity, str) and isinstance(key, str) and source in (OWN, TRUSTED):
                found.append(TrustedKey(identity, key, str(source), revoked if isinstance(revoked, str) else None))
        return found, None

    def distrusted(self) -> set[tuple[str, str]]:
        """(identity, public key) pairs the user removed: no endorsement brings them back (an unreadable file
        trusts nothing, so it needs no list)."""
        try:
            doc = self._document()
        except ActionRefused:
            return set()
        return {
            (str(i.get("identity")), str(i.get("public_key"))) for i in _list(doc, "distrusted") if isinstance(i, dict)
        }

    def add(self, identity: str, public_key: str, source: str, at: str) -> bool:
        """Trust `public_key` for `identity`; False when it already is (nothing written)."""
        doc = self._document()
        keys: list[object] = doc["keys"]  # type: ignore[assignment]
        removed = _list(doc, "distrusted")
        kept = [
            i
            for i in removed
            if not (isinstance(i, dict) and (i.get("identity"), i.get("public_key")) == (identity, public_key))
        ]
        if len(kept) != len(removed):
            doc["distrusted"] = kept  # trusted by hand again: the earlier removal no longer stands
        for item in keys:
            if isinstance(item, dict) and item.get("identity") == identity and item.get("public_key") == public_key:
                if source == OWN and item.get("source") != OWN:
                    item["source"] = OWN  # a key found to be ours after all: it is recorded as ours
                    self._write(doc)
                    return True
                return False
        keys.append(
            {
                "identity": identity,
                "public_key": public_key,
                "fingerprint": fingerprint(public_key),
                "source": source,
                "added_at": at,
            }
        )
        self._write(doc)
        return True

    def revoke(self, identity: str, public_keys: list[str], at: str) -> None:
        """Signatures by these keys of `identity` made from `at` on no longer count (what they signed before does),
        kept here so that an agent removing the mark from keys.yaml cannot bring a lost key back."""
        doc = self._document()
        changed = False
        for item in _keys(doc):
            if not isinstance(item, dict):
                continue
            if item.get("identity") == identity and item.get("public_key") in public_keys and "revoked_at" not in item:
                item["revoked_at"] = at
                changed = True
        if changed:
            self._write(doc)

    def remove(self, identity: str, fingerprint_prefix: str = "") -> list[str]:
        """Stop trusting `identity`'s keys (those whose fingerprint starts with `fingerprint_prefix`); the
        fingerprints removed."""
        doc = self._document()
        keys: list[object] = doc["keys"]  # type: ignore[assignment]
        gone = [
            i
            for i in keys
            if isinstance(i, dict)
            and i.get("identity") == identity
            and fingerprint(str(i.get("public_key"))).startswith(fingerprint_prefix.lower())
        ]
        if gone:
            doc["keys"] = [i for i in keys if not any(i is g for g in gone)]
            # remembered, so that an endorsement in a store (which the user cannot take back) does not keep the key
            doc["distrusted"] = _list(doc, "distrusted") + [
                {"identity": g.get("identity"), "public_key": g.get("public_key"), "fingerprint": g.get("fingerprint")}
                for g in gone
            ]
            self._write(doc)
        return [fingerprint(str(i.get("public_key"))) for i in gone]

    def _write(self, doc: dict[str, object]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        doc["schema_version"] = SCHEMA_VERSION
        atomic_write(self.path, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def _list(doc: dict[str, object], name: str) -> list[object]:
    found = doc.get(name)
    return found if isinstance(found, list) else []


def _keys(doc: dict[str, object]) -> list[object]:
    keys = doc.get("keys")
    return keys if isinstance(keys, list) else []
