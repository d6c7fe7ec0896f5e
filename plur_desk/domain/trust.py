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
