"""Command line: `plur-desk [STORE]` opens the app; `check` and `search` work from a terminal."""

from __future__ import annotations

import argparse
import sys

from plur_desk import __version__
from plur_desk.infra.paths import default_store_path


def _check(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="plur-desk check", description="Report on a PLUR store; writes nothing.")
    parser.add_argument("store", nargs="?", help="store directory (default: $PLUR_PATH, else ~/.plur)")
    parser.add_argument("--json", action="store_true", help="machine-readable output (a stable interface)")
    args = parser.parse_args(argv)
    from plur_desk.app.check import run_check

    report = run_check(default_store_path(args.store))
    print(report.to_json() if args.json else report.to_text())
    return report.exit_code


def _gui(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="plur-desk", description="Review console for PLUR memory stores.")
    parser.add_argument("store", nargs="?", help="store directory (default: $PLUR_PATH, else ~/.plur)")
    parser.add_argument("--reviewer", help="your name, recorded on every decision")
    parser.add_argument("--demo", action="store_true", help="open a copy of the bundled demo store")
    parser.add_argument("--self-check", action="store_true", help="smoke-test the installation and exit")
    parser.add_argument("--version", action="version", version=f"plur-desk {__version__}")
    args = parser.parse_args(argv)
    from plur_desk.ui.app import run_app

    return run_app(store=args.store, reviewer=args.reviewer, demo=args.demo, self_check=args.self_check)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["check"]:
        return _check(argv[1:])
    if argv[:1] == ["search"]:
        from plur_desk.app.search_cli import main as search_main

        return search_main(argv[1:])
    return _gui(argv)


if __name__ == "__main__":
    sys.exit(main())
