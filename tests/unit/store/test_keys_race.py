"""keys.yaml writes lose no concurrent PLUR registration: PLUR's `registerPublicKey` rewrites the file (temp file +
rename, no lock; PLUR-NEXT.md, from PLUR's signing PRs #1136), so it can land just before or just after ours."""

from __future__ import annotations

import os

import pytest

from plur_desk.store import atomic
from plur_desk.store.keys import keys_file
from plur_desk.store.keys.keys_file import read_keys, register_key, replace_key
from plur_desk.store.lists.yaml_dump import Dumper
from plur_desk.store.lists.yaml_load import load_general

OURS = ("human:Ada Reviewer", "MCowBQYDK2VwAyEAours", "2026-12-02T10:00:00.000Z")
THEIRS = ("agent:claude", "MCowBQYDK2VwAyEAtheirs", "2026-12-02T10:00:00.001Z")


def plur_registers(root, doc=None, who=THEIRS):
    """PLUR's registerPublicKey as PLUR-NEXT.md describes it: the identity's first entry replaced (else appended),
    the whole file written to a temp file and renamed over keys.yaml, no lock. `doc` is what it read earlier."""
    path = root / "keys.yaml"
    if doc is None:
        doc = load_general(path.read_text()) if path.exists() else {"keys": []}
    entry = {"identity": who[0], "public_key": who[1], "added_at": who[2]}
    keys = doc["keys"]
    at = next((i for i, k in enumerate(keys) if k.get("identity") == who[0]), None)
    if at is None:
        keys.append(entry)
    else:
        keys[at] = entry
    tmp = path.with_name("keys.yaml.plur.tmp")
    tmp.write_text(Dumper(double_quotes=False, line_width=120).dump({"keys": keys}))
    os.replace(tmp, path)


def _litter(root):
    return sorted(p.name for p in root.iterdir() if "keys.yaml" in p.name and p.name != "keys.yaml")


def _identities(root):
    return sorted(e.identity for e in read_keys(root).entries)


@pytest.fixture
def root(tmp_path):
    plur_registers(tmp_path, who=("agent:other", "MCowBQYDK2VwAyEAother", "2026-12-01T00:00:00.000Z"))
    return tmp_path


def _when_staging(monkeypatch, action):
    """Run `action` once, when our write has read keys.yaml and is about to rename its new version in."""
    done = []

    def staging(target, parts, **kwargs):
        if target.name == "keys.yaml" and not done:
            done.append(True)
            action()
        return real(target, parts, **kwargs)

    real = atomic.stage
    monkeypatch.setattr(atomic, "stage", staging)
    monkeypatch.setattr(keys_file, "stage", staging, raising=False)


def _after_renaming(monkeypatch, action):
    """Run `action` once, right after our write renamed its version of keys.yaml in."""
    done = []
    real = atomic.Staged.commit

    def commit(self, crash_label=""):
        real(self, crash_label)
        if self.target.name == "keys.yaml" and not done:
            done.append(True)
            action()

    monkeypatch.setattr(atomic.Staged, "commit", commit)


@pytest.mark.parametrize("ours", ["register", "replace"])
def test_a_plur_registration_landing_between_our_read_and_our_rename_is_kept(root, monkeypatch, ours):
    _when_staging(monkeypatch, lambda: plur_registers(root))
    if ours == "register":
        assert register_key(root, *OURS) is True
    else:
        replace_key(root, OURS[0], OURS[1], OURS[2], revoke=False)
    assert _identities(root) == ["agent:claude", "agent:other", OURS[0]]
    assert read_keys(root).current(OURS[0]).public_key == OURS[1]
    assert _litter(root) == []


def test_a_plur_registration_renamed_over_ours_is_followed_by_ours_again(root, monkeypatch):
    read_by_plur_earlier = load_general((root / "keys.yaml").read_text())  # PLUR read before we wrote
    _after_renaming(monkeypatch, lambda: plur_registers(root, read_by_plur_earlier))
    assert register_key(root, *OURS) is True
    assert _identities(root) == ["agent:claude", "agent:other", OURS[0]]


def test_nothing_is_written_when_the_key_is_already_there(root):
    register_key(root, *OURS)
    before = (root / "keys.yaml").read_bytes(), (root / "keys.yaml").stat().st_mtime_ns
    assert register_key(root, *OURS) is False
    replace_key(root, OURS[0], OURS[1], "2026-12-03T00:00:00.000Z", revoke=False)  # already in force
    assert ((root / "keys.yaml").read_bytes(), (root / "keys.yaml").stat().st_mtime_ns) == before
    assert _litter(root) == []
