"""A team of git clones of one PLUR store (a bare remote and clones under tmp_path), driven by the real PLUR."""

from __future__ import annotations

from pathlib import Path

from plur_desk.app.review.bootstrap import open_session
from plur_desk.app.review.session import ReviewSession
from plur_desk.app.team.git_repo import find_repo
from plur_desk.app.team.merge_driver import install

from support.plain_team import git, identity
from support.stores import plur

MARKERS = (b"<<<<<<<", b">>>>>>>", b"\n=======\n")


class Team:
    """`remote` is a bare repository; `clone(name)` gives a reviewer's store, seeded from the first one."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.remote = base / "remote.git"
        git(base, "init", "-q", "--bare", "-b", "main", str(self.remote))
        self.clones: dict[str, Path] = {}

    def home(self, name: str) -> Path:
        return self.base / f"home-{name}"

    def seed(self, name: str, statements: list[tuple[str, dict]], *, driver: bool = True) -> Path:
        store = self.base / name
        store.mkdir()
        learned = plur(store, self.home(name), [{"op": "learn", "statement": s, "options": o} for s, o in statements])
        assert all("error" not in r for r in learned), learned
        git(store, "init", "-q", "-b", "main")
        identity(store, name)
        if driver:
            install(find_repo(store))  # type: ignore[arg-type]
        self.sync(name, store)
        self.clones[name] = store
        return store

    def clone(self, name: str, *, driver: bool = True) -> Path:
        store = self.base / name
        git(self.base, "clone", "-q", str(self.remote), str(store))
        identity(store, name)
        if driver:
            install(find_repo(store))  # type: ignore[arg-type]
        self.clones[name] = store
        return store

    def sync(self, name: str, store: Path | None = None) -> dict:
        """PLUR's own sync() on that clone."""
        store = store or self.clones[name]
        (result,) = plur(store, self.home(name), [{"op": "sync", "remote": str(self.remote)}])
        return result  # type: ignore[no-any-return]

    def plur(self, name: str, ops: list[dict]) -> list:
        results = plur(self.clones[name], self.home(name), ops)
        assert all(not (isinstance(r, dict) and "error" in r) for r in results), results
        return results

    def session(self, name: str) -> ReviewSession:
        return open_session(self.clones[name], name, load_history=False, use_cache=False)

    def files(self, name: str) -> tuple[bytes, bytes]:
        store = self.clones[name]
        return tuple(
            (store / f).read_bytes() if (store / f).exists() else b"" for f in ("engrams.yaml", "tensions.yaml")
        )  # type: ignore[return-value]

    def assert_converged(self) -> dict:
        """Every clone holds identical store files, no conflict markers, nothing PLUR quarantines."""
        names = list(self.clones)
        first = self.files(names[0])
        for name in names:
            files = self.files(name)
            for data in files:
                assert not any(m in data for m in MARKERS), f"{name}: conflict markers in the store"
            assert files == first, f"{name} differs from {names[0]}"
            (loaded,) = self.plur(name, [{"op": "load"}])
            assert loaded["quarantined"] == [], f"{name}: PLUR quarantines {loaded['quarantined']}"
            status = git(self.clones[name], "status", "--porcelain", "--", "engrams.yaml", "tensions.yaml")
            assert "U" not in status.split(" ")[0] if status else True, status
            assert git(self.clones[name], "stash", "list") == "", f"{name}: a stash was left behind"
        (loaded,) = self.plur(names[0], [{"op": "load"}])
        return loaded["engrams"]  # type: ignore[no-any-return]
