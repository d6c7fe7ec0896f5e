"""`plur-desk trust`: the keys this user trusts (list, add after checking a fingerprint, remove) and endorsements
that let a team share trust (a trusted reviewer vouches for a teammate's key once; everyone trusting her follows)."""

from __future__ import annotations

import argparse
import base64
import hashlib
from datetime import UTC, datetime
from pathlib import Path

from plur_desk.app.trust.trust_file import TrustFile
from plur_desk.app.trust.verifier import TrustChecker
from plur_desk.domain.trust import OWN, fingerprint, reviewer_identity
from plur_desk.infra.clock import iso_ms
from plur_desk.infra.errors import PlurDeskError
from plur_desk.infra.paths import STORE_HELP, default_store_path
from plur_desk.store.keys.keys_file import read_keys


def _full_fingerprint(public_key: str) -> str:
    try:
        return hashlib.sha256(base64.b64decode(public_key)).hexdigest()
    except ValueError:
        return ""


def listed_key(root: Path, identity: str, given: str) -> str:
    """The key keys.yaml lists for `identity` whose fingerprint is `given` (PLUR's 16 hex characters, or the whole
    SHA-256): what the person told you out of band. PlurDeskError naming the keys listed when none matches."""
    given = given.strip().lower().replace(":", "")
    entries = read_keys(root).for_identity(identity)
    for entry in entries:
        if given in (fingerprint(entry.public_key), _full_fingerprint(entry.public_key)):
            return entry.public_key
    listed = ", ".join(fingerprint(e.public_key) for e in entries) or "none"
    raise PlurDeskError(
        f"keys.yaml in {root} lists no key of {identity} with fingerprint {given} (its keys: {listed}); nothing "
        "was trusted. Ask them for the fingerprint plur-desk shows under Reviewer identity."
    )


def _identity(text: str) -> str:
    return text if text.startswith("human:") else reviewer_identity(text)


def _list(args: argparse.Namespace) -> int:
    trust_file = TrustFile()
    keys, problem = trust_file.read()
    print(f"trust file: {trust_file.path}")
    if problem:
        print(f"  cannot be read: {problem}")
    for key in keys:
        revoked = f"  revoked {key.revoked_at}" if key.revoked_at else ""
        print(f"  {key.identity}  {fingerprint(key.public_key)}  {key.source}{revoked}")
    root = default_store_path(args.store)
    if (root / "keys.yaml").exists() or (root / ".plur-desk").exists():
        checker = TrustChecker(root, trust_file)
        endorsed = [k for k in checker.trusted().keys if k.source.startswith("endorsed")]
        for key in endorsed:
            print(f"  {key.identity}  {fingerprint(key.public_key)}  {key.source} (in {root})")
        for entry in checker.untrusted_entries():
            print(f"  not trusted: {entry.identity}  {fingerprint(entry.public_key)}  (listed in {root / 'keys.yaml'})")
        for entry in checker.foreign_keys():
            print(f"  NOT YOURS: {entry.identity}  {fingerprint(entry.public_key)}  (listed in {root / 'keys.yaml'})")
    return 0


def _named_key(args: argparse.Namespace, refused: str) -> tuple[Path, TrustChecker, str, str]:
    """The store, its trust checker, and the identity and keys.yaml key a command names; refused (`refused` says
    what was not done) when the name looks like someone you trust already: whoever trusts you would then take its
    decisions for theirs."""
    root = default_store_path(args.store)
    identity = _identity(args.identity)
    public_key = listed_key(root, identity, args.fingerprint)
    checker = TrustChecker(root)
    twin = checker.trusted().lookalike(identity)
    if twin is not None:
        raise PlurDeskError(f"{identity!r} looks like {twin!r}, whom you trust already, but is another name; {refused}")
    return root, checker, identity, public_key


def _add(args: argparse.Namespace) -> int:
    _root, checker, identity, public_key = _named_key(args, "not trusted")
    print(checker.trust_key(identity, public_key, iso_ms(datetime.now(UTC))))
    return 0


def _remove(args: argparse.Namespace) -> int:
    identity = _identity(args.identity)
    gone = TrustFile().remove(identity, args.fingerprint or "")
    if not gone:
        print(f"no trusted key of {identity}{' with fingerprint ' + args.fingerprint if args.fingerprint else ''}")
        return 1
    print(f"no longer trusted: {identity} {', '.join(gone)}")
    return 0


def _endorse(args: argparse.Namespace) -> int:
    """Vouch, signed with your key, for a teammate's key in the store: whoever trusts you then trusts it too."""
    from plur_desk.app.trust.signing import ReviewerKeys
    from plur_desk.app.trust.vault import KeyVault
    from plur_desk.domain.review import Reviewer
    from plur_desk.infra.paths import data_dir
    from plur_desk.store.keys.endorsements import append_endorsement, endorsement

    root, _checker, identity, public_key = _named_key(args, "not endorsed")
    keys = ReviewerKeys(root, Reviewer(args.reviewer), KeyVault(data_dir()))
    own, _problem = keys.trust_file.read()
    if not any(k.identity == keys.identity and k.source == OWN for k in own):
        raise PlurDeskError(f"{keys.identity} has no key of yours yet: make a decision with plur-desk first")
    now = iso_ms(datetime.now(UTC))
    append_endorsement(root, endorsement(identity, public_key, keys.identity, now, keys.key()))
    print(TrustChecker(root).trust_key(identity, public_key, now))
    print(f"{keys.identity} endorses {identity}'s key {fingerprint(public_key)} in {root / '.plur-desk'}")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="plur-desk trust",
        description="The reviewer keys you trust, kept outside every store. A key listed in a store's keys.yaml "
        "counts for nothing until you trust it (check its fingerprint with its owner) or someone you trust "
        "endorses it.",
    )
    parser.add_argument("--store", help=STORE_HELP)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="trusted keys, endorsed ones and keys.yaml's others")
    add = commands.add_parser("add", help="trust IDENTITY's key listed in keys.yaml with this FINGERPRINT")
    add.add_argument("identity", help="human:NAME (or NAME)")
    add.add_argument("fingerprint", help="the 16 hex characters plur-desk shows (or the whole SHA-256)")
    remove = commands.add_parser("remove", help="stop trusting IDENTITY's key(s)")
    remove.add_argument("identity")
    remove.add_argument("fingerprint", nargs="?", help="only the key with this fingerprint (prefix)")
    endorse = commands.add_parser("endorse", help="vouch for IDENTITY's key in the store, signed with your key")
    endorse.add_argument("identity")
    endorse.add_argument("fingerprint")
    endorse.add_argument("--reviewer", required=True, help="your reviewer name (whose key signs the endorsement)")
    args = parser.parse_args(argv)
    run = {"list": _list, "add": _add, "remove": _remove, "endorse": _endorse}[args.command]
    try:
        return run(args)
    except PlurDeskError as exc:
        print(f"plur-desk trust: {exc}")
        return 1
