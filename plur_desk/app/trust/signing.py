"""The reviewer's signing key for one store: created and registered on first use, asked for once when locked,
replaced only on explicit confirmation (and that replacement is itself a signed history event)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from plur_desk.app.trust.trust_file import TrustFile
from plur_desk.app.trust.vault import KeyLocked, KeyVault
from plur_desk.domain.review import Reviewer, make_event
from plur_desk.domain.trust import OWN, fingerprint, reviewer_identity
from plur_desk.infra.clock import iso_ms
from plur_desk.infra.errors import KeyConflict, KeyUnavailable, Outcome, PlurDeskError
from plur_desk.store.keys import signatures
from plur_desk.store.keys.keys_file import read_keys, register_key, replace_key

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

EPOCH = "1970-01-01T00:00:00.000Z"
MADE_KEPT = 4096  # signatures kept for signing the same bytes again (a bulk is at most a few thousand events)
AskUnlock = Callable[[str], bool]  # shown the reason; True = try again (the keyring prompts to unlock)


__all__ = ["ReviewerKeys", "fingerprint"]


class ReviewerKeys:
    def __init__(
        self,
        store_root: Path,
        reviewer: Reviewer,
        vault: KeyVault,
        ask_unlock: AskUnlock | None = None,
        trust_file: TrustFile | None = None,
    ):
        self.root = store_root
        self.trust_file = trust_file if trust_file is not None else TrustFile()
        self.reviewer = reviewer
        self.identity = reviewer_identity(reviewer.name)
        self.vault = vault
        self.ask_unlock = ask_unlock
        self._key: Ed25519PrivateKey | None = None
        # a key and the signatures it made, by the bytes signed (one pair, replaced whole, so a signature is never
        # kept under another key): an event is signed when it is decided and again over its final bytes at the
        # append, which on a store without a chain are the same bytes (a bulk approve of 500: 500 signatures saved)
        self._made: tuple[Ed25519PrivateKey | None, dict[bytes, str]] = (None, {})
        self.notices: list[str] = []  # one line per thing done without asking (created, registered)

    # -- the key -------------------------------------------------------------------------------------------

    def _load(self) -> Ed25519PrivateKey | None:
        try:
            return self.vault.load(self.identity)
        except KeyLocked as exc:
            if self.ask_unlock is None or not self.ask_unlock(
                f"The keyring holding your reviewer key is locked: {exc}"
            ):
                raise KeyUnavailable(
                    "your reviewer key is in a locked keyring and was not unlocked; the decision was not written"
                ) from None
        try:
            return self.vault.load(self.identity)
        except KeyLocked:
            raise KeyUnavailable("the keyring is still locked; the decision was not written") from None

    def key(self) -> Ed25519PrivateKey:
        """The reviewer's private key, created (and kept out of the store) on first use."""
        if self._key is None:
            key = self._load()
            if key is None:
                from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

                key = Ed25519PrivateKey.generate()
                try:
                    where = self.vault.save(self.identity, key)
                except KeyLocked:
                    raise KeyUnavailable("the keyring is locked; no reviewer key could be kept") from None
                self.notices.append(f"Created a signing key for {self.identity}: {where.sentence()}.")
            self._key = key
            self._trust_own(key)
        return self._key

    def _trust_own(self, key: Ed25519PrivateKey) -> None:
        """The key is this user's (its private half is in their vault): it is trusted for their identity, in their
        trust file outside the store, with nothing asked. A trust file that cannot be written leaves a notice."""
        try:
            self.trust_file.add(self.identity, signatures.public_key_b64(key), OWN, iso_ms(datetime.now(UTC)))
        except (PlurDeskError, OSError) as exc:
            self.notices.append(f"Your key could not be recorded as yours in {self.trust_file.path}: {exc}")

    def remember_own(self) -> None:
        """Record the key as this user's when the trust file does not have it yet (a key made before the trust
        file existed), without asking anything: a locked keyring or no key yet leaves it for the first decision."""
        base, _problem = self.trust_file.read()
        if any(k.identity == self.identity and k.source == OWN for k in base):
            return
        try:
            key = self.vault.load(self.identity)
        except (KeyLocked, PlurDeskError):
            return
        if key is not None:
            self._trust_own(key)

    def public_key(self) -> str:
        return signatures.public_key_b64(self.key())

    # -- the store's registry ------------------------------------------------------------------------------

    def ready(self) -> None:
        """The key is reachable (nothing is written here). Raises KeyConflict when keys.yaml's key in force for
        this identity is an earlier key of this user's own (making this one the key in force needs confirmation).
        A key listed there that was never this user's decides nothing for them (their trust file says which keys
        are theirs): the decision goes ahead, signed with their own key, and a notice names the other key."""
        public = self.public_key()
        current = read_keys(self.root).current(self.identity)
        if current is None or current.public_key == public:
            return
        base, _problem = self.trust_file.read()
        if not any(k.identity == self.identity and k.public_key == current.public_key for k in base):
            self.notices.append(
                f"keys.yaml lists another key for {self.identity} first (fingerprint {fingerprint(current.public_key)}),"
                f" which was never yours: anything it signs shows as FORGED. Your decision was signed with your own "
                f"key ({fingerprint(public)}). If that key is yours from another machine, Reviewer identity… → "
                "Rotate key makes this machine's key the one in force."
            )
            return
        raise KeyConflict(
            f"keys.yaml already holds another key of yours for {self.identity} (fingerprint "
            f"{fingerprint(current.public_key)}; this machine's is {fingerprint(public)}). If it is not yours, "
            "someone registered it to pass as you. Use Reviewer identity… to replace it",
            outcome=Outcome.NOTHING_WRITTEN,
        )

    def register(self, now: datetime) -> None:
        """Once a decision was written: register the key when the identity has none yet (first use). Never
        raises: the decision is on disk already, so a failure here becomes a notice."""
        try:
            public = self.public_key()
            current = read_keys(self.root).current(self.identity)
            if current is None and register_key(self.root, self.identity, public, iso_ms(now)):
                self.notices.append(
                    f"Registered your public key in {self.root / 'keys.yaml'} (fingerprint {fingerprint(public)})."
                )
        except (PlurDeskError, OSError) as exc:
            self.notices.append(
                f"Your decision was written and signed, but your key could not be registered in keys.yaml ({exc}); "
                "until it is, others cannot find the key your decisions are signed with."
            )

    def sign(self, event: dict[str, object]) -> dict[str, object]:
        key = self.key()
        made_by, made = self._made  # read once: a key and its own signatures, never another key's
        if key is not made_by or len(made) >= MADE_KEPT:
            made = {}
            self._made = (key, made)
        return signatures.sign(event, key, self.identity, made)

    def replace(self, now: datetime, *, revoke: bool, new_key: bool, disown: bool = False) -> dict[str, object]:
        """Make a key this identity's key in force (after the reviewer confirmed). `new_key` generates a fresh one
        (rotation); `revoke` marks the old ones lost from now on, `disown` as never having been the reviewer's
        (nothing they signed counts). Returns the signed event to append."""
        if new_key:
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

            key = Ed25519PrivateKey.generate()
            try:
                where = self.vault.save(self.identity, key)
            except KeyLocked:
                raise KeyUnavailable("the keyring is locked; the key was not replaced") from None
            self._key = key
            self._trust_own(key)
            self.notices.append(f"New signing key for {self.identity}: {where.sentence()}.")
        public = self.public_key()
        old = replace_key(
            self.root,
            self.identity,
            public,
            iso_ms(now),
            revoke=revoke or disown,
            revoked_from=EPOCH if disown else None,
        )
        if revoke or disown:
            self.trust_file.revoke(self.identity, old, EPOCH if disown else iso_ms(now))
        data = {
            "action": "disown_key" if disown else "revoke_key" if revoke else "replace_key",
            "identity": self.identity,
            "public_key": public,
            "fingerprint": fingerprint(public),
            "old_fingerprints": [fingerprint(k) for k in old],
        }
        return self.sign(make_event("reviewer_key_changed", "", now, data, self.reviewer))
