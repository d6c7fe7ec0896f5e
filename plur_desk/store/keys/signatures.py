"""Ed25519 signatures over PLUR's canonical event bytes, and the trust verdict for a human claim (which only a key
the reading user trusts can make valid: keys.yaml names keys, it does not vouch for them).

The signed bytes are exactly the hash preimage (chain.canonical_bytes: the event without top-level hash,
signature and signer), signed with pure Ed25519 and stored as standard padded base64 in a top-level `signature`,
with the identity in `signer` — what PLUR does for checkpoints (PLUR-HISTORY-CHAIN.md §3).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from plur_desk.domain.trust import HUMAN_PREFIX, Trust, TrustedKeys, TrustState, fingerprint, reviewer_identity
from plur_desk.store.history.chain import canonical_bytes
from plur_desk.store.keys.keys_file import KeyEntry, KeyRegistry

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

# cryptography is imported by the functions that sign or verify, not at launch (the window shows drafts without it).


def public_key_b64(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """SPKI DER (44 bytes for Ed25519) in base64, as keys.yaml holds it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(der).decode("ascii")


def private_key_der(key: Ed25519PrivateKey) -> bytes:
    """PKCS#8 DER (48 bytes), PLUR's private key file format."""
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def load_private_key(der: bytes) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = serialization.load_der_private_key(der, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("not an Ed25519 private key")
    return key


KEPT_UP_TO = 1 << 16  # bytes: an event's signature is kept for signing it again, not a whole journal record's


def sign(
    event: dict[str, object], key: Ed25519PrivateKey, identity: str, made: dict[bytes, str] | None = None
) -> dict[str, object]:
    """A copy of `event` with `signature` and `signer` over its canonical bytes (a pure function). `made`: the
    signatures this `key` already made, by the bytes signed (Ed25519 is deterministic: the same key and bytes give
    the same signature), consulted and added to."""
    signed = {k: v for k, v in event.items() if k not in ("signature", "signer", "hash")}
    message = canonical_bytes(signed)
    found = made.get(message) if made is not None else None
    if found is None:
        found = base64.b64encode(key.sign(message)).decode("ascii")
        if made is not None and len(message) <= KEPT_UP_TO:
            made[message] = found
    signed["signature"] = found
    signed["signer"] = identity
    if "hash" in event:
        signed["hash"] = event["hash"]
    return signed


@lru_cache(maxsize=256)
def _public_key(public_key: str) -> Ed25519PublicKey | None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        loaded = serialization.load_der_public_key(base64.b64decode(public_key, validate=True))
    except (ValueError, binascii.Error, TypeError):
        return None
    return loaded if isinstance(loaded, Ed25519PublicKey) else None


def verify(event: dict[str, object], public_key: str) -> bool:
    from cryptography.exceptions import InvalidSignature

    signature = event.get("signature")
    if not isinstance(signature, str):
        return False
    loaded = _public_key(public_key)
    if loaded is None:
        return False
    try:
        raw = base64.b64decode(signature, validate=True)
    except (ValueError, binascii.Error, TypeError):
        return False
    if base64.b64encode(raw).decode("ascii") != signature:
        # one spelling per signature: the decoder ignores the unused bits before `==`, and a copy spelt otherwise
        # would pass for another signature where copies are told apart by it (replays, recovery, `check`)
        return False
    stored = _stored(event)
    # An event signed when its action was journaled, before a chained append set `prev`, is appended by recovery
    # as it was signed (recovery signs nothing): its signature covers everything but the chain link.
    for signed in (stored, {k: v for k, v in stored.items() if k != "prev"}) if "prev" in stored else (stored,):
        try:
            loaded.verify(raw, canonical_bytes(signed))
        except (InvalidSignature, ValueError, TypeError):
            continue
        return True
    return False


def _stored(event: dict[str, object]) -> dict[str, object]:
    """The event as it is on disk: without the reader's bookkeeping keys (`_month`, `_line`)."""
    return {k: v for k, v in event.items() if k not in ("_month", "_line", "_raw")}


def claimed_human(event: dict[str, object]) -> str | None:
    """The reviewer name an event claims to come from, or None when it claims no human."""
    actor = event.get("actor")
    if isinstance(actor, dict) and actor.get("kind") == "human":
        return str(actor.get("asserted_by", "") or "")
    return None


def _signer_of(event: dict[str, object]) -> str | None:
    signer = event.get("signer")
    if isinstance(signer, str):
        return signer
    data = event.get("data")
    inner = data.get("signer") if isinstance(data, dict) else None
    return inner if isinstance(inner, str) else None


def _ended(registry: KeyRegistry, identity: str, public_key: str, timestamp: str) -> str | None:
    """Why keys.yaml says a signature by this key at `timestamp` no longer counts (retired or revoked before it), or
    None. Anyone may write keys.yaml, so it can only take trust away, never give it."""
    for entry in registry.for_identity(identity):
        if entry.public_key == public_key and not entry.valid_at(timestamp):
            return f"revoked {entry.revoked_at}" if entry.revoked_at else f"retired {entry.retired_at}"
    return None


Verifies = Callable[[dict[str, object], str], bool]  # whether an event's signature verifies under a public key


def check_signature(
    event: dict[str, object], registry: KeyRegistry, trusted: TrustedKeys, verifies: Verifies = verify
) -> tuple[TrustState, str, str | None]:
    """The verdict on the signature alone, the detail, and the signing key when one verifies. A key counts only
    when this user trusts it for the signer's identity; keys.yaml only says which key an identity claims.
    `verifies` answers as `verify` does (a caller may hand in one that remembers answers for the same bytes)."""
    if not isinstance(event.get("signature"), str):
        return TrustState.UNSIGNED, "no signature", None
    signer = _signer_of(event)
    if signer is None:
        return TrustState.UNKNOWN_SIGNER, "signed, but names no signer", None
    stamp = str(event.get("timestamp", ""))
    mine = trusted.keys_for(signer)
    found = _verifying(event, [k.public_key for k in mine], verifies)
    for key in mine:  # the first entry naming the key that verifies, as the trust file lists them
        if key.public_key == found:
            ended = _ended(registry, signer, key.public_key, stamp)
            if key.revoked_at is not None and stamp >= key.revoked_at:
                ended = f"revoked {key.revoked_at}"
            if ended:
                return TrustState.INVALID, f"signed by {signer} with a key {ended}, after that time", key.public_key
            return (
                TrustState.VALID,
                f"signed by {signer} ({key.source} key {fingerprint(key.public_key)})",
                key.public_key,
            )
    listed = registry.for_identity(signer)
    failed = {k.public_key for k in mine}  # every trusted key was tried above, and none verified
    for entry in _tried(listed):
        if entry.public_key not in failed and verifies(event, entry.public_key):
            shown = f"the key keys.yaml lists for {signer} (fingerprint {fingerprint(entry.public_key)})"
            if mine:
                yours = ", ".join(fingerprint(k.public_key) for k in mine)
                return (
                    TrustState.FOREIGN_KEY_FOR_IDENTITY,
                    f"signed with {shown}, which is not the key you trust for {signer} ({yours}): a forgery",
                    entry.public_key,
                )
            return (
                TrustState.UNTRUSTED_KEY,
                f"verifies with {shown}, which you have not trusted; `plur-desk trust add` after checking it with them",
                entry.public_key,
            )
    if not listed and not mine:
        return TrustState.UNKNOWN_SIGNER, f"signed by {signer}, which has no key in keys.yaml nor a trusted one", None
    return TrustState.INVALID, f"the signature does not match any key of {signer}", None


def _verifying(event: dict[str, object], keys: list[str], verifies: Verifies) -> str | None:
    """The key among `keys` the event's signature verifies under, trying each distinct key once, the last listed
    first: a trust file lists a reviewer's keys as they were added, and the newest signs what is new (a benchmark
    that added a key per run had each new line verified 77 times, on the window's thread when shown)."""
    for public_key in reversed(dict.fromkeys(keys)):
        if verifies(event, public_key):
            return public_key
    return None


LISTED_TRIED = 16  # keys.yaml keys of one identity a signature is tried against: its rotations, not an agent's list


def _tried(listed: list[KeyEntry]) -> list[KeyEntry]:
    """The first LISTED_TRIED distinct keys keys.yaml lists for an identity. They only name what an untrusted
    signature is (a key of theirs you never trusted, or a forgery); anyone can list thousands, and each forged claim
    would be checked against every one (seconds per line). A key beyond them leaves the claim INVALID: never valid."""
    seen: set[str] = set()
    out = []
    for entry in listed:
        if entry.public_key not in seen:
            seen.add(entry.public_key)
            out.append(entry)
            if len(out) == LISTED_TRIED:
                break
    return out


def classify(
    event: dict[str, object], registry: KeyRegistry, trusted: TrustedKeys | None = None, verifies: Verifies = verify
) -> Trust:
    """The trust of a `kind: human` claim; NOT_HUMAN for any other event."""
    name = claimed_human(event)
    if name is None:
        return Trust(TrustState.NOT_HUMAN)
    trusted = trusted if trusted is not None else TrustedKeys()
    state, detail, key = check_signature(event, registry, trusted, verifies)
    signer = _signer_of(event) or ""
    if key is not None and (not signer.startswith(HUMAN_PREFIX) or signer != reviewer_identity(name)):
        return Trust(TrustState.INVALID, f"claims {name!r} but is signed by {signer}, another identity")
    if state is not TrustState.VALID:
        twin = trusted.lookalike(reviewer_identity(name))
        if twin is not None:
            return Trust(
                TrustState.CONFUSABLE_IDENTITY,
                f"claims {reviewer_identity(name)!r}, a name that looks like {twin!r} but is another ({detail})",
            )
    return Trust(state, detail)
