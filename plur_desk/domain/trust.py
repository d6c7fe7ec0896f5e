"""How far a human decision can be trusted: the four answers a signature check gives about a `kind: human` claim."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

HUMAN_PREFIX = "human:"


class TrustState(Enum):
    VALID = "valid"  # signed by the claimed reviewer's key, registered in keys.yaml and in force at the time
    UNSIGNED = "unsigned"  # claims a human, carries no signature
    INVALID = "invalid"  # a signature that does not verify, or not by the claimed reviewer, or by a revoked key
    UNKNOWN_SIGNER = "unknown_signer"  # signed, but by an identity with no key in keys.yaml
    NOT_HUMAN = "not_human"  # the event does not claim a human actor: nothing to check


LABELS = {
    TrustState.VALID: "signed",
    TrustState.UNSIGNED: "UNSIGNED human claim",
    TrustState.INVALID: "INVALID signature",
    TrustState.UNKNOWN_SIGNER: "UNKNOWN signer",
    TrustState.NOT_HUMAN: "",
}


@dataclass(frozen=True)
class Trust:
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
        return self.state in (TrustState.UNSIGNED, TrustState.INVALID, TrustState.UNKNOWN_SIGNER)


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
