"""`plur-desk sync`: fetch, merge with the driver and push a git-synced PLUR store; local steps under PLUR's lock.

It commits what PLUR's sync would (the same scope strip), merges the remote in with a merge commit (the
driver decides engrams.yaml and tensions.yaml), re-applies the records the strip keeps off the remote with the
same three-way merge (never a git stash), and pushes, retrying when a teammate pushed meanwhile. It also
repairs what PLUR's sync can leave behind: a half-done rebase or merge, unmerged store files after a failed
autostash pop, and the "diverged, NOT pulled" state. Exit 0 converged, 1 disagreements wait, 2 could not sync.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path

from plur_desk.app.team.disagreements import find_disagreements
from plur_desk.app.team.git_repo import GitError, Repo, find_repo
from plur_desk.app.team.merge_driver import follow_renumbered, install, installed, merge_versions
from plur_desk.app.team.sync_report import SyncReport, changes_between
from plur_desk.infra.errors import PlurDeskError
from plur_desk.infra.paths import default_store_path, store_parser
from plur_desk.store import baseline
from plur_desk.store.atomic import atomic_write
from plur_desk.store.lists.list_file import ENGRAMS, TENSIONS
from plur_desk.store.lists.yaml_load import YamlSyntaxError, load_general
from plur_desk.store.locking.lock import TENSIONS_POLICY, LockPolicy, locked
from plur_desk.store.team import team_ledger
from plur_desk.store.team.merge import MergeError, read_side
from plur_desk.store.team.merge_side import engram_key
from plur_desk.store.team.sync_strip import SIBLINGS, strip_engrams, strip_sibling

MERGED_FILES = ("engrams.yaml", "tensions.yaml")
SYNC_LOCK = LockPolicy(max_wait=180.0, name_holder_after=None)  # as long as PLUR waits for its own store lock
ATTEMPTS = 3


class SyncFailed(PlurDeskError):
    pass


def remote_type(store: Path) -> str:
    try:
        config = load_general((store / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, YamlSyntaxError, UnicodeDecodeError):
        return "personal"
    sync = config.get("sync") if isinstance(config, dict) else None
    value = sync.get("remote_type") if isinstance(sync, dict) else None
    return "shared" if value == "shared" else "personal"


class _Sync:
    def __init__(self, repo: Repo, report: SyncReport) -> None:
        self.repo = repo
        self.report = report
        self.store = repo.store
        self.prefix = repo.store_prefix

    def path(self, name: str) -> str:
        return f"{self.prefix}{name}"

    # -- repair ------------------------------------------------------------------------------------------

    def repair(self) -> None:
        git_dir = self.repo.git_dir
        if (git_dir / "rebase-merge").exists() or (git_dir / "rebase-apply").exists():
            self.repo.run("rebase", "--abort", check=False)
            self.report.notes.append("an interrupted rebase (left by an earlier sync) was aborted; nothing was lost")
        unmerged = self._unmerged()
        if (git_dir / "MERGE_HEAD").exists() and not unmerged:
            self.repo.run("merge", "--abort", check=False)
            self.report.notes.append("an interrupted merge was aborted")
        self.resolve_unmerged(unmerged, commit_merge=(git_dir / "MERGE_HEAD").exists())
        stashes = self.repo.run("stash", "list", check=False).stdout.decode().strip()
        if stashes:
            self.report.notes.append(
                f"git holds {len(stashes.splitlines())} stash entr(y/ies) from before this sync (kept; see git stash list)"
            )

    def _unmerged(self) -> list[str]:
        out = self.repo.run("diff", "--name-only", "--diff-filter=U", check=False).stdout.decode()
        return [line for line in out.splitlines() if line]

    def resolve_unmerged(self, unmerged: list[str], *, commit_merge: bool) -> None:
        """Unmerged store files (a failed autostash pop, a conflicted merge): merged from git's three stages."""
        others = [p for p in unmerged if p not in (self.path(n) for n in MERGED_FILES)]
        if others:
            raise SyncFailed(
                f"git has unmerged files plur-desk does not merge: {', '.join(others)}; resolve them first"
            )
        for path in unmerged:
            name = Path(path).name
            base, ours, theirs = (self.repo.blob(f":{stage}:{path}") or b"" for stage in (1, 2, 3))
            result = merge_versions(name, base, ours, theirs, self.pushed(path), self.store)
            atomic_write(self.repo.top / path, result.data)
            self.record(name, result)
            if commit_merge:
                self.repo.run("add", "--", path)
            else:
                self.repo.run("reset", "-q", "--", path)
            self.report.notes.append(f"{name} was left unmerged by an earlier sync; merged it from both versions")
        if commit_merge and unmerged:
            self.repo.run("commit", "--no-edit", "-q")

    def pushed(self, path: str) -> tuple[bytes, ...]:
        blobs = (self.repo.blob(f"{ref}:{path}") for ref in self.repo.remote_refs())
        return tuple(b for b in blobs if b)

    def record(self, name: str, result: object) -> None:
        renumbered = getattr(result, "renumbered", [])
        disagreements = getattr(result, "disagreements", [])
        team_ledger.append(self.store, team_ledger.RENUMBERED, [{**m, "file": name} for m in renumbered])
        team_ledger.append(self.store, team_ledger.DISAGREEMENTS, [{**d, "file": name} for d in disagreements])
        self.report.renumbered += [m for m in renumbered if m not in self.report.renumbered]

    # -- commit what PLUR's sync would push ------------------------------------------------------------------

    def commit_local(self, kind: str) -> None:
        engrams = self.store / "engrams.yaml"
        pushed_ids: set[str] | None = None
        if engrams.exists():
            stripped = strip_engrams(engrams.read_bytes(), kind)
            pushed_ids = stripped.kept
            self._stage("engrams.yaml", stripped.data)
            if stripped.dropped:
                self.report.held_local = len(stripped.dropped)
        for name in SIBLINGS:
            file = self.store / name
            if not file.exists():
                continue
            data = file.read_bytes()
            if kind == "shared" and pushed_ids is not None:
                try:
                    data = strip_sibling(name, data, pushed_ids).data
                except MergeError as exc:
                    self.report.notes.append(f"{name} not committed: {exc}")
                    continue
            self._stage(name, data)
        watched = baseline.path_of(self.store)
        if watched.is_file():  # the signed baseline travels with the store (.plur-desk/ is otherwise this clone's)
            self._stage(baseline.RELATIVE, watched.read_bytes())
        if self.repo.run("diff", "--cached", "--quiet", check=False).returncode != 0:
            stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
            self.repo.run("commit", "-q", "-m", f"plur-desk sync {stamp}")
            self.report.committed = True

    def _stage(self, name: str, data: bytes) -> None:
        blob = self.repo.run("hash-object", "-w", "--stdin", input=data).stdout.decode().strip()
        self.repo.run("update-index", "--add", "--cacheinfo", f"100644,{blob},{self.path(name)}")

    # -- merge the remote in -------------------------------------------------------------------------------

    def counts(self, upstream: str) -> tuple[int, int]:
        out = self.repo.text("rev-list", "--left-right", "--count", f"HEAD...{upstream}")
        ahead, behind = (int(x) for x in out.split())
        return ahead, behind

    def merge_remote(self, upstream: str) -> None:
        """Merge the remote in. PLUR writes tensions.yaml under its own short lock, which is held for the whole
        merge: a PLUR tension operation meanwhile fails loudly instead of being overwritten silently."""
        head = self.repo.text("rev-parse", "HEAD")
        known = len(team_ledger.read(self.store, team_ledger.RENUMBERED))
        with locked(self.store / "tensions.yaml", TENSIONS_POLICY):
            held = self._hold_local_records()
            try:
                # no autostash: a dirty file git cannot merge makes git refuse, never leave markers in it
                # (and no hooks: this sync does what the post-merge hook would, and holds the lock it would wait for)
                proc = self.repo.run(
                    "-c",
                    "merge.autoStash=false",
                    "-c",
                    "core.hooksPath=/dev/null",
                    "merge",
                    "--no-edit",
                    "-q",
                    upstream,
                    check=False,
                )
                if proc.returncode != 0:
                    unmerged = self._unmerged()
                    if not unmerged:
                        raise SyncFailed("git could not merge: " + (proc.stderr or proc.stdout).decode().strip())
                    self.resolve_unmerged(unmerged, commit_merge=True)
            except BaseException:
                if (self.repo.git_dir / "MERGE_HEAD").exists():
                    self.repo.run("merge", "--abort", check=False)
                self._put_back(held, head, head)
                raise
            new_head = self.repo.text("rev-parse", "HEAD")
            self._put_back(held, head, new_head)
        for move in team_ledger.read(self.store, team_ledger.RENUMBERED)[known:]:  # what git's driver runs did
            entry = {k: str(v) for k, v in move.items() if k != "file"}
            if entry not in self.report.renumbered:
                self.report.renumbered.append(entry)
        self.report.incoming += self.changes(head, new_head)

    def changes(self, old: str, new: str) -> list[str]:
        def blobs(name: str) -> tuple[bytes | None, bytes | None]:
            path = self.path(name)
            return (self.repo.blob(f"{old}:{path}") if old else b""), self.repo.blob(f"{new}:{path}")

        return changes_between(blobs("engrams.yaml"), blobs("tensions.yaml"))

    def follow_renumbered(self) -> bool:
        if follow_renumbered(self.store):
            self.report.notes.append("tensions recorded for renumbered engrams now name their new ids")
            return True
        return False

    def _hold_local_records(self) -> dict[str, bytes]:
        """Working-tree store files that differ from HEAD (the records the strip keeps local), set to HEAD."""
        held = {}
        for name in MERGED_FILES:
            file = self.store / name
            committed = self.repo.blob(f"HEAD:{self.path(name)}")
            # engrams.yaml always goes through the merge: records a teammate's strip removed must stay here
            if file.exists() and committed is not None and (name == "engrams.yaml" or file.read_bytes() != committed):
                held[name] = file.read_bytes()
                atomic_write(file, committed)
        return held

    def _put_back(self, held: dict[str, bytes], old_head: str, new_head: str) -> None:
        for name, working in held.items():
            base = self.repo.blob(f"{old_head}:{self.path(name)}") or b""
            merged = self.repo.blob(f"{new_head}:{self.path(name)}") or b""
            result = merge_versions(
                name, base, working, merged, self.pushed(self.path(name)), self.store, theirs_order=True
            )
            atomic_write(self.store / name, result.data)
            self.record(name, result)

    # -- the whole sequence ----------------------------------------------------------------------------------

    def local(self) -> AbstractContextManager[str]:
        """PLUR's store lock, for the steps that read or write the working tree and the index. Never across a
        fetch or a push: a hold over the network is a writer blocked for as long as the remote takes, and a hold
        past 60 s is taken over by a PLUR on another host sharing the store (PLUR 0.21 CHANGELOG, P1)."""
        return locked(self.store / "engrams.yaml", SYNC_LOCK)

    def run(self) -> None:
        repo, report = self.repo, self.report
        remote = repo.run("remote", "get-url", "origin", check=False)
        if remote.returncode != 0:
            raise SyncFailed("this clone has no 'origin' remote; PLUR's sync sets one up (plur sync <remote-url>)")
        report.remote = remote.stdout.decode().strip()
        kind = remote_type(self.store)
        report.remote_type = kind
        with self.local():
            missing = installed(repo)
            if missing:
                report.notes += [f"installed the merge driver ({line})" for line in install(repo)]
            self.repair()
            branch = repo.text("symbolic-ref", "--short", "HEAD")
            report.branch = branch
            self.commit_local(kind)
        upstream = f"origin/{branch}"
        for attempt in range(ATTEMPTS):
            repo.run("fetch", "-q", "origin")
            with self.local():
                exists = repo.ok("rev-parse", "--verify", "-q", f"refs/remotes/{upstream}")
                ahead, behind = self.counts(upstream) if exists else (1, 0)
                if attempt == 0:
                    report.ahead_before, report.behind_before = ahead, behind
                if behind:
                    self.merge_remote(upstream)
                    if self.follow_renumbered():
                        self.commit_local(kind)
                    ahead, behind = self.counts(upstream)
            if not ahead:
                break
            report.outgoing += self.changes(upstream if exists else "", "HEAD")
            push = repo.run("push", "-q", "-u", "origin", f"HEAD:refs/heads/{branch}", check=False)
            if push.returncode == 0:
                report.pushed = True
                break
            report.notes.append("the remote moved while pushing; merging again")
        else:
            raise SyncFailed("the remote kept moving; gave up after three attempts (nothing lost, run sync again)")
        repo.run("fetch", "-q", "origin")
        report.ahead_after, report.behind_after = self.counts(upstream)


def team_view(store: Path) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The engrams a disagreement can be about (flagged by a merge, or in a resolved tension) and all tensions;
    no other engram is parsed."""
    tensions: list[dict[str, object]] = []
    file = store / "tensions.yaml"
    if file.exists():
        side = read_side(file.read_bytes(), TENSIONS, lambda v: str(v.get("id")))
        tensions = [side.records[k] for k in side.order]
    wanted = {str(t.get(k)) for t in tensions if t.get("status") == "resolved" for k in ("engram_a", "engram_b")}
    file = store / "engrams.yaml"
    if not file.exists():
        return [], tensions
    engrams = read_side(file.read_bytes(), ENGRAMS, engram_key)
    chosen = [
        engrams.records[k]
        for k in engrams.order
        if k in wanted or engrams.blocks.get(k) is None or b"\n    review_disagreements:" in engrams.blocks[k]
    ]
    return chosen, tensions


def run_sync(store: Path) -> SyncReport:
    report = SyncReport(store=str(store))
    repo = find_repo(store)
    if repo is None:
        report.error = f"{store} is not a git clone; run PLUR's sync once (plur sync <remote-url>) to set one up"
        return report
    try:
        _Sync(repo, report).run()
    except (GitError, SyncFailed, MergeError, PlurDeskError, OSError) as exc:
        report.error = str(exc)
    try:
        engrams, tensions = team_view(repo.store)
        report.disagreements = find_disagreements(engrams, tensions, repo.store)
    except MergeError as exc:
        report.error = report.error or str(exc)
    return report


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def main(argv: list[str]) -> int:
    parser = store_parser(
        "sync",
        "Fetch, merge (plur-desk's merge driver) and push a git-synced PLUR store, under PLUR's lock.",
        epilog="exit status: 0 converged, 1 converged but team disagreements wait for a reviewer, 2 could not sync",
        json="machine-readable report",
    )
    args = parser.parse_args(argv)
    report = run_sync(default_store_path(args.store))
    _say(report.to_json() if args.json else report.to_text())
    return report.exit_code
