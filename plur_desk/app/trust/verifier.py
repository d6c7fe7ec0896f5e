"""The one place that answers "is this event validly signed by a trusted key for the identity it claims": keys.yaml
(PLUR's directory of claimed keys), this user's trust file and the store's endorsements, each read again only when
its file changed; every caller (the views, `check`, recovery, baselines) asks `TrustChecker(event) -> Trust`."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from plur_desk.app.demo import DEMO_REVIEWERS, from_demo_copy, is_demo_copy
from plur_desk.app.trust.trust_file import TrustFile
from plur_desk.domain.trust import TRUSTED, Trust, TrustedKey, TrustedKeys, TrustState, fingerprint
from plur_desk.infra.jobs import give_way
from plur_desk.store.keys.endorsements import ENDORSEMENTS, Endorsement, read_endorsements
from plur_desk.store.keys.keys_file import KEYS_FILE, KeyEntry, KeyRegistry, read_keys
from plur_desk.store.keys.signatures import Verifies, claimed_human, classify, verify
from plur_desk.store.safe_open import special_file_problem


def _stamp(path: Path) -> tuple[int, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0, 0)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def endorsed(
    base: list[TrustedKey],
    endorsements: list[Endorsement],
    registry: KeyRegistry,
    distrusted: frozenset[tuple[str, str]] = frozenset(),
) -> list[TrustedKey]:
    """`base` and every key vouched for by a chain of valid endorsements starting at a key in `base`. An
    endorsement never adds a key for one of the user's own identities (only the user says which key is theirs),
    one the user stopped trusting (`distrusted`), one for a name that looks like a trusted one, nor one keys.yaml
    marks revoked."""
    own = {k.identity for k in base if k.source == "own"}
    keys = list(base)
    have = {(k.identity, k.public_key) for k in keys}
    # one line per statement: copies of a genuine line (anyone can append them) are verified and added once, or
    # each would add the key again and every signature claiming that name would be checked against each copy
    unique = {(e.identity, e.public_key, e.by, e.document.get("signature")): e for e in reversed(endorsements)}
    pending = [e for e in unique.values() if e.identity not in own and (e.identity, e.public_key) not in distrusted]
    tried: dict[int, int] = {}  # endorsement -> how many of its endorser's keys it was checked against
    grew = True
    while grew and pending:
        grew = False
        known = TrustedKeys(tuple(keys))
        left = []
        for item in pending:
            if (item.identity, item.public_key) in have or known.lookalike(item.identity) is not None:
                continue  # a name that reads as a trusted one but is another is never vouched into trust
            endorsers = known.keys_for(item.by)
            fresh, tried[id(item)] = endorsers[tried.get(id(item), 0) :], len(endorsers)
            if any(item.verifies_with(k.public_key) for k in fresh) and not _revoked(
                registry, item.identity, item.public_key
            ):
                keys.append(TrustedKey(item.identity, item.public_key, f"endorsed by {item.by}"))
                have.add((item.identity, item.public_key))
                grew = True
            else:
                left.append(item)
        pending = left
    return keys


def _revoked(registry: KeyRegistry, identity: str, public_key: str) -> bool:
    return any(e.public_key == public_key and e.revoked_at is not None for e in registry.for_identity(identity))


def _verify(event: dict[str, object], public_key: str) -> bool:
    """`verify`, after any repaint of the window under way (infra/jobs.py `give_way`): a signature is a few hundred
    microseconds of Python (the canonical bytes) and a view's refresh may verify hundreds of new ones, each a take of
    the interpreter lock the repaint's calls into Python wait for."""
    give_way()
    return verify(event, public_key)


class TrustChecker:
    def __init__(self, root: Path, trust_file: TrustFile | None = None) -> None:
        self.root = root
        self.path = root / KEYS_FILE
        self.trust_file = trust_file if trust_file is not None else TrustFile()
        self._stamp: tuple[object, ...] | None = None
        self._registry = KeyRegistry()
        self._trusted = TrustedKeys()
        self.problems: list[str] = []  # what could not be read (trust file, endorsements): shown, never trusted
        self.generation = 0  # bumped whenever any of the three files changed: verdicts cached by callers are stale
        self.demo = is_demo_copy(root)
        # SHA-256 of a line's exact bytes -> {public key: whether its signature verifies under it}: what no change of
        # trust alters (only which key counts), so a new keys.yaml decides the verdicts again without verifying
        self._verified: dict[bytes, dict[str, bool]] = {}

    def registry(self) -> KeyRegistry:
        """keys.yaml as now, the trusted keys brought up to date with it (one stat per file)."""
        stamp = (_stamp(self.path), self.trust_file.stamp(), _stamp(self.root / ENDORSEMENTS))
        if stamp != self._stamp:
            special = special_file_problem(self.path)  # a FIFO would block the read for ever: never opened
            self._registry = KeyRegistry(problem=special) if special else read_keys(self.root)
            base, problem = self.trust_file.read()
            if self.demo:
                demo = "the demo store's reviewer (in demo copies only)"
                base = [*base, *(TrustedKey(identity, key, demo) for identity, key in DEMO_REVIEWERS)]
            found, endorsement_problem = read_endorsements(self.root)
            removed = frozenset(self.trust_file.distrusted())
            self._trusted = TrustedKeys(tuple(endorsed(base, found, self._registry, removed)))
            self.problems = [p for p in (problem, endorsement_problem) if p]
            self._stamp = stamp
            self.generation += 1
        return self._registry

    def trusted(self) -> TrustedKeys:
        self.registry()
        return self._trusted

    def __call__(self, event: dict[str, object]) -> Trust:
        self.registry()
        return self.check(event)

    def check(self, event: dict[str, object], line: bytes | None = None, kept: dict[str, bool] | None = None) -> Trust:
        """Classify against the files as last read (a caller checking many lines refreshes once, then calls this:
        one stat per query, not one per line). `line`: the SHA-256 of the exact bytes `event` was parsed from, the
        event unchanged since; whether its signature verifies under a key is then remembered for those bytes, once
        this process verified it. `kept`: what a reading kept on disk says about those bytes ({public key: whether
        it verifies}), used for this call alone and never remembered: a file anyone on the account can write must
        not make a line valid for the history or the ledger, which share what is remembered here."""
        verifies = _verify if line is None else self._remembered(line, kept)
        trust = classify(event, self._registry, self._trusted, verifies)
        if trust.counts_as_human and not self.demo and from_demo_copy(event):
            # signed with the user's own key while trying the demo, where nothing is kept: copied out, never a decision
            return Trust(TrustState.INVALID, f"{trust.detail}, in a demo copy: it counts only there")
        return trust

    def check_line(self, event: dict[str, object], raw: bytes) -> Trust:
        """`check` for an event parsed from the line `raw` (a history line, unchanged since): what verifying it
        established is kept by the line's SHA-256, so a new keys.yaml judges it again without verifying it again.
        Only a signed human claim is hashed: any other line is never verified, so nothing is kept for it."""
        if self._stamp is None:
            self.registry()  # never read: the files are read first, as `__call__` would
        if claimed_human(event) is None or not isinstance(event.get("signature"), str):
            return self.check(event)
        return self.check(event, hashlib.sha256(raw).digest())

    def verified(self, line: bytes) -> dict[str, bool]:
        """What verifying the line whose SHA-256 is `line` established here: {public key: whether it verifies}."""
        return dict(self._verified.get(line, {}))

    def _remembered(self, line: bytes, kept: dict[str, bool] | None) -> Verifies:
        def verifies(event: dict[str, object], public_key: str) -> bool:
            found = self._verified.get(line)
            known = found.get(public_key) if found is not None else None
            if known is None and kept is not None:
                known = kept.get(public_key)  # the reading's own answer: not remembered for anyone else
            if known is None:
                known = _verify(event, public_key)
                self._verified.setdefault(line, {})[public_key] = known  # verified here, so kept for every caller
            return known

        return verifies

    def foreign_keys(self) -> list[KeyEntry]:
        """keys.yaml entries naming one of the user's own identities with a key that is not theirs: planted by
        someone passing as them (what they sign is a forgery; the user's own key keeps working)."""
        registry, trusted = self.registry(), self._trusted
        return [
            e
            for e in registry.entries
            if e.identity in trusted.own_identities and not trusted.trusts(e.identity, e.public_key)
        ]

    def untrusted_entries(self) -> list[KeyEntry]:
        """keys.yaml entries in force whose key this user does not trust (what `trust add` could be asked for)."""
        registry, trusted = self.registry(), self._trusted
        return [e for e in registry.entries if e.in_force and not trusted.trusts(e.identity, e.public_key)]

    def trust_key(self, identity: str, public_key: str, at: str) -> str:
        """The user trusts `public_key` for `identity` (after being shown both and confirming); one line saying so.
        Verdicts cached by callers follow, as the trust file changed."""
        if self.trust_file.add(identity, public_key, TRUSTED, at):
            return f"You now trust {identity}'s key {fingerprint(public_key)} (in {self.trust_file.path})."
        return f"{identity}'s key {fingerprint(public_key)} was already trusted."

    def foreign_notice(self) -> str:
        """One paragraph for the window and `check`, or "" when keys.yaml lists no foreign key for the user."""
        foreign = self.foreign_keys()
        if not foreign:
            return ""
        listed = "; ".join(f"{e.identity} (fingerprint {fingerprint(e.public_key)})" for e in foreign)
        return (
            f"keys.yaml lists a key for you that is not yours: {listed}. Someone registered it to pass as you; "
            "anything signed with it is shown as FORGED. Your own decisions are still signed and checked with your key."
        )


__all__ = ["TrustChecker", "TrustState"]
