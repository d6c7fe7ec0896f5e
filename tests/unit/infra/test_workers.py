"""Our worker processes import the same copy of plur_desk as the process that starts them: a `plur_desk/` folder
in the working directory (or another checkout's editable install) never takes its place."""

from __future__ import annotations

import subprocess
from pathlib import Path

import plur_desk
from plur_desk.infra.workers import PACKAGE_PARENT, worker_command


def _decoy(folder: Path) -> Path:
    """Another copy of plur_desk whose `infra/workers.py` says so when run."""
    infra = folder / "plur_desk" / "infra"
    infra.mkdir(parents=True)
    (folder / "plur_desk" / "__init__.py").write_text("")
    (infra / "__init__.py").write_text("")
    (infra / "workers.py").write_text("print('decoy')\n")
    return folder


def test_a_worker_runs_this_copy_of_the_package_even_from_a_folder_holding_another(tmp_path):
    assert Path(plur_desk.__file__).resolve().parent.parent == PACKAGE_PARENT
    argv, env = worker_command("plur_desk.infra.workers")
    ran = subprocess.run(argv, cwd=_decoy(tmp_path), env=env, capture_output=True, text=True, check=True)
    assert ran.stdout == ""  # the decoy would have printed

    probe = [*argv[:2], "-c", "import plur_desk; print(plur_desk.__file__)"]
    found = subprocess.run(probe, cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert Path(found.strip()).resolve() == Path(plur_desk.__file__).resolve()


def test_without_the_command_the_folder_it_starts_in_would_win(tmp_path):
    """The decoy is real: a plain `python -m` from that folder imports it (so the test above can fail)."""
    argv, env = worker_command("plur_desk.infra.workers")
    plain = [argv[0], "-m", "plur_desk.infra.workers"]
    ran = subprocess.run(plain, cwd=_decoy(tmp_path), env=env, capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "decoy"
