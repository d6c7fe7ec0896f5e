"""How far a human decision can be trusted: the answers a signature check gives about a `kind: human` claim, and
about a `review` record (which only a verified decision on the same content backs)."""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property

from plur_desk.infra.confusables import name_key

HUMAN_PREFIX = "human:"


class TrustState(Enum):
    VALID = "valid"  # signed by the claimed reviewer with a key this user trusts (own, trusted, endorsed), in force
    UNSIGNED = "unsigned"  # claims a human, carries no signature
    INVALID = "invalid"  # a signature that does not verify, or not by the claimed reviewer, or by a revoked key
    UNKNOWN_SIGNER = "unknown_signer"  # signed, but by an identity with no key in keys.yaml nor among trusted keys
    UNTRUSTED_KEY = "untrusted_key"  # verifies against keys.yaml's key, but this user never trusted that key
    FOREIGN_KEY_FOR_IDENTITY = "foreign_key_for_identity"  # signed with a key that is not the trusted one of its name
    CONFUSABLE_IDENTITY = "confusable_identity"  # claims a name a reader takes for a trusted one, but another name
    NO_DECISION = "review_without_decision"  # a review record no verified decision on this content backs
    UNDONE = "undone_review_restored"  # a review record a later verified undo or rejection took back
    NOT_HUMAN = "not_human"  # the event does not claim a human actor: nothing to check


LABELS = {
    TrustState.VALID: "signed",
    TrustState.UNSIGNED: "UNSIGNED human claim",
    TrustState.INVALID: "INVALID signature",
    TrustState.UNKNOWN_SIGNER: "UNKNOWN signer",
    TrustState.UNTRUSTED_KEY: "UNTRUSTED key",
    TrustState.FOREIGN_KEY_FOR_IDENTITY: "FORGED: not this reviewer's key",
    TrustState.CONFUSABLE_IDENTITY: "LOOK-ALIKE name",
    TrustState.NO_DECISION: "no signed decision",
    TrustState.UNDONE: "claims a review that was undone",
    TrustState.NOT_HUMAN: "",
}


@dataclass(frozen=True)
class Trust:
    """How far a signed claim can be trusted, and why."""

    state: TrustState
    detail: str = ""

    @property
    def label(self) -> str:
        return LABELS[self.state]

    @property
    def counts_as_human(self) -> bool:
        """Only a valid signature makes a claim a human verdict."""
        return self.state is TrustState.VALID

    @property
    def suspicious(self) -> bool:
        return self.state not in (TrustState.VALID, TrustState.NOT_HUMAN)


def fingerprint(public_key: str) -> str:
    """PLUR's display fingerprint: SHA-256 of the SPKI DER, first 16 hex characters."""
    try:
        return hashlib.sha256(base64.b64decode(public_key)).hexdigest()[:16]
    except (binascii.Error, ValueError):
        return "(not a key)"


OWN = "own"  # the key whose private half is in this user's key vault
TRUSTED = "trusted"  # a key the user trusted by hand, fingerprint checked


@dataclass(frozen=True)
class TrustedKey:
    """A public key a signature may verify against, and where the trust in it comes from."""

    identity: str
    public_key: str
    source: str  # OWN, TRUSTED, or "endorsed by <identity>"
    revoked_at: str | None = None  # signatures made from this instant on do not count (kept outside the store)


@dataclass(frozen=True)
class TrustedKeys:
    """The keys that count for this user: never read from the store by themselves (keys.yaml is only a directory of
    claims); own and hand-trusted keys from the user's trust file, and keys endorsed by those."""

    keys: tuple[TrustedKey, ...] = ()
    _by_identity: dict[str, list[TrustedKey]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for key in self.keys:
            self._by_identity.setdefault(key.identity, []).append(key)

    def keys_for(self, identity: str) -> list[TrustedKey]:
        return self._by_identity.get(identity, [])

    def trusts(self, identity: str, public_key: str) -> bool:
        return any(k.public_key == public_key for k in self.keys_for(identity))

    @cached_property
    def own_identities(self) -> frozenset[str]:
        return frozenset(k.identity for k in self.keys if k.source == OWN)

    @cached_property
    def _names(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for identity in self._by_identity:
            found.setdefault(name_key(identity), []).append(identity)
        return found

    def lookalike(self, identity: str) -> str | None:
        """A trusted identity a reader would take `identity` for, when `identity` is not itself trusted."""
        if identity in self._by_identity:
            return None
        found = self._names.get(name_key(identity))
        return found[0] if found else None


def reviewer_identity(name: str) -> str:
    """The signing identity of a reviewer: `human:<name>`, which PLUR's agent identities never start with."""
    return HUMAN_PREFIX + name.strip()


_STATE_OF_ACTION = {"approve": "approved", "reject": "rejected"}


def backs_review(event: dict[str, object], engram_id: str, record: dict[str, object]) -> bool:
    """Whether a history event records exactly this `review` record: same engram, instant, reviewer and decision
    (a forged record cannot borrow the signature of another decision made at the same moment)."""
    data = event.get("data")
    actor = event.get("actor")
    if not isinstance(data, dict) or not isinstance(actor, dict):
        return False
    return (
        event.get("engram_id") == engram_id
        and event.get("timestamp") == record.get("at")
        and actor.get("asserted_by") == record.get("by")
        and _STATE_OF_ACTION.get(str(data.get("action"))) == record.get("state")
    )
