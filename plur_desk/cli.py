"""Command line: `plur-desk [STORE]` opens the app; the terminal commands in COMMANDS work without a window."""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from plur_desk import __version__
from plur_desk.infra.paths import STORE_HELP, default_store_path, store_parser


@dataclass(frozen=True)
class Command:
    """A terminal command: its name, one line of help, and `module:function` taking argv and returning the exit code."""

    name: str
    summary: str
    entry: str

    def run(self, argv: list[str]) -> int:
        module, _, function = self.entry.partition(":")
        main: Callable[[list[str]], int] = getattr(importlib.import_module(module), function)
        return main(argv)


# One line each; `plur-desk --help` lists them. Each command has its own `--help`.
COMMANDS: tuple[Command, ...] = (
    Command("check", "report on a store and every entry PLUR would quarantine (read-only)", "plur_desk.cli:check_main"),
    Command(
        "trust",
        "the reviewer keys you trust: list, add IDENTITY FINGERPRINT, remove, endorse",
        "plur_desk.app.trust.trust_cli:main",
    ),
    Command(
        "search", "search a store as the app does, from a script (read-only)", "plur_desk.app.search.search_cli:main"
    ),
    Command(
        "merge-driver",
        "git merge driver for a team store; --install/--uninstall in a clone",
        "plur_desk.app.team.merge_driver:main",
    ),
    Command(
        "disagreements",
        "list what teammates decided differently in a synced store (read-only)",
        "plur_desk.app.team.team_review:disagreements_main",
    ),
    Command(
        "sync",
        "fetch, merge with the driver and push a git-synced store, under PLUR's lock",
        "plur_desk.app.team.sync:main",
    ),
    Command(
        "conflicts",
        "likely contradictions found offline, with evidence (read-only)",
        "plur_desk.app.conflicts.conflicts_cli:main",
    ),
    Command(
        "changes",
        "what agents changed around the draft gate since the watched baseline; --start to begin watching",
        "plur_desk.app.changes.changes_cli:main",
    ),
    Command(
        "writers",
        "the writer ledger: each agent's drafts approved, rejected, pending (read-only)",
        "plur_desk.app.scale.scale_cli:writers_main",
    ),
    Command(
        "clusters",
        "clusters of near-duplicate drafts with the similarity that joined them (read-only)",
        "plur_desk.app.scale.scale_cli:clusters_main",
    ),
)


def check_main(argv: list[str]) -> int:
    parser = store_parser("check", "Report on a PLUR store; writes nothing.")
    args = parser.parse_args(argv)
    from plur_desk.app.check import run_check

    report = run_check(default_store_path(args.store))
    print(report.to_json() if args.json else report.to_text())
    return report.exit_code


def _gui_parser() -> argparse.ArgumentParser:
    commands = "\n".join(f"  {c.name:<14}{c.summary}" for c in COMMANDS)
    parser = argparse.ArgumentParser(
        prog="plur-desk",
        description="Review console for PLUR memory stores. Opens the window on STORE.",
        epilog=f"terminal commands (plur-desk COMMAND --help for each):\n{commands}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("store", nargs="?", help=STORE_HELP)
    parser.add_argument(
        "--reviewer", help="your name for this run only (not saved as the default), recorded on every decision"
    )
    parser.add_argument(
        "--demo", action="store_true", help="open a fresh copy of the bundled demo store (each start begins afresh)"
    )
    parser.add_argument("--self-check", action="store_true", help="smoke-test the installation off-screen and exit")
    parser.add_argument("--version", action="version", version=f"plur-desk {__version__}")
    return parser


def _gui(argv: list[str]) -> int:
    args = _gui_parser().parse_args(argv)
    from plur_desk.ui.app import run_app

    return run_app(store=args.store, reviewer=args.reviewer, demo=args.demo, self_check=args.self_check)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for command in COMMANDS:
        if argv[:1] == [command.name]:
            return _quiet_on_closed_pipe(functools.partial(command.run, argv[1:]))
    return _gui(argv)


def _quiet_on_closed_pipe(run: Callable[[], int]) -> int:
    """A reader that stops early (`| head`) is not an error worth a traceback: stop writing, exit as a process
    killed by SIGPIPE would (128 + 13), which is what shells expect of a command in a closed pipe."""
    try:
        code = run()
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not raise again
        os.close(devnull)
        return 141
    return code


if __name__ == "__main__":
    sys.exit(main())
