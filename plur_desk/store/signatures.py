"""Ed25519 signatures over PLUR's canonical event bytes, and the trust verdict for a human claim.

The signed bytes are exactly the hash preimage (chain.canonical_bytes: the event without top-level hash,
signature and signer), signed with pure Ed25519 and stored as standard padded base64 in a top-level `signature`,
with the identity in `signer` — what PLUR does for checkpoints (PLUR-HISTORY-CHAIN.md §3).
"""

from __future__ import annotations

import base64
import binascii
from functools import lru_cache
from typing import TYPE_CHECKING

from plur_desk.domain.trust import HUMAN_PREFIX, Trust, TrustState, reviewer_identity
from plur_desk.store.chain import canonical_bytes
from plur_desk.store.keys_file import KeyEntry, KeyRegistry

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


def sign(event: dict[str, object], key: Ed25519PrivateKey, identity: str) -> dict[str, object]:
    """A copy of `event` with `signature` and `signer` over its canonical bytes (a pure function)."""
    signed = {k: v for k, v in event.items() if k not in ("signature", "signer", "hash")}
    signature = key.sign(canonical_bytes(signed))
    signed["signature"] = base64.b64encode(signature).decode("ascii")
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


def check_signature(event: dict[str, object], registry: KeyRegistry) -> tuple[TrustState, str, KeyEntry | None]:
    """PLUR's verdicts (valid, invalid, unknown_signer, unsigned), plus keys retired or revoked before the event."""
    if not isinstance(event.get("signature"), str):
        return TrustState.UNSIGNED, "no signature", None
    signer = _signer_of(event)
    if signer is None:
        return TrustState.UNKNOWN_SIGNER, "signed, but names no signer", None
    # PLUR uses an identity's first entry; later ones count only as the former keys rotation and revocation leave
    # (an unmarked extra entry is what an agent appending its own key under a reviewer's name would write).
    found = registry.for_identity(signer)
    entries = found[:1] + [e for e in found[1:] if not e.in_force]
    if not entries:
        return TrustState.UNKNOWN_SIGNER, f"signed by {signer}, which has no key in keys.yaml", None
    for entry in entries:
        if verify(event, entry.public_key):
            if entry.valid_at(str(event.get("timestamp", ""))):
                return TrustState.VALID, f"signed by {signer}", entry
            ended = f"revoked {entry.revoked_at}" if entry.revoked_at else f"retired {entry.retired_at}"
            return TrustState.INVALID, f"signed by {signer} with a key {ended}, after that time", entry
    return TrustState.INVALID, f"the signature does not match {signer}'s key(s) in keys.yaml", None


def classify(event: dict[str, object], registry: KeyRegistry) -> Trust:
    """The trust of a `kind: human` claim; NOT_HUMAN for any other event."""
    name = claimed_human(event)
    if name is None:
        return Trust(TrustState.NOT_HUMAN)
    state, detail, _entry = check_signature(event, registry)
    if state is TrustState.VALID:
        signer = _signer_of(event) or ""
        if not signer.startswith(HUMAN_PREFIX) or signer != reviewer_identity(name):
            return Trust(TrustState.INVALID, f"claims {name!r} but is signed by {signer}, another identity")
    return Trust(state, detail)
