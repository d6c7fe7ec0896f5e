"""What a launch loads before the first draft can be acted on: only what showing and deciding it needs.

Importing numpy, tantivy, onnxruntime, keyring or cryptography (and the modules of features used later: search,
contradictions, clusters, git sync) costs the window about half a second of a 2-core machine before anything is on
screen; pydantic and ruamel (for the settings file) another 0.1 s. They load off the GUI thread when their feature starts, or on first use (the key when signing a decision).
The window runs in a fresh process, so what this test process imported does not count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from plur_desk.app.demo import demo_source

ROOT = Path(__file__).resolve().parents[2]

LATER = (
    "numpy",
    "tantivy",
    "onnxruntime",
    "keyring",
    "cryptography",
    "pydantic",  # settings are read without it (app/settings.py), and nothing else on the way uses it
    "ruamel",
    "plur_desk.app.search.store_search",
    "plur_desk.app.conflicts.finder",
    "plur_desk.app.scale.clusters",
    "plur_desk.app.scale.writer_stats",  # the Writers ledger's rows (12 generated dataclass methods): with the ledger
    "plur_desk.app.team.sync",
    "plur_desk.store.team.merge",
    "plur_desk.app.changes.watch",  # the Changes pane's baseline and detection: with the first decision or list
    "plur_desk.app.changes.baseline_read",
    "plur_desk.domain.agents.agent_changes",
    "plur_desk.domain.commands",  # and the tension rules it uses: with the first decision (warmed up after the load)
    "plur_desk.domain.plur_rules.tension_rules",
    # the dialogs, the Validity pane's timeline and date fields, the team dialog and the history export: on first use
    "plur_desk.ui.common.dialogs",
    "plur_desk.ui.validity.timeline",
    "plur_desk.ui.validity.date_field",
    "plur_desk.ui.team.team_dialog",
    "plur_desk.ui.history.history_export",
    "csv",
    "difflib",
    "statistics",
    # the package's files are a plain path; libc's mallopt is found without ctypes.util (which ran ldconfig). PyYAML
    # is not listed: a store with a keys.yaml (as this demo store) reads it before the first draft, for the trust of
    # earlier rejections; a store without one never imports it before (`store/lists/yaml_load.py`, `js_yaml_loader`)
    "importlib.resources",
    "ctypes.util",
    # html (its 2,231-entity table), decimal and getpass (termios): ~2-4 ms of a launch, for none of what it does
    "html",
    "decimal",
    "getpass",
)

# Qt classes PySide makes on their first import, each with its enums (~2 M instructions a class, measured: 19 of
# them 36 M): the dialogs and the Validity pane's date and time fields, made on first use (module `PySide6.QtX` holds
# a class only once it was made)
QT_LATER = (
    "QMessageBox",
    "QFileDialog",
    "QInputDialog",
    "QProgressDialog",
    "QDialogButtonBox",
    "QFormLayout",
    "QCheckBox",
    "QDateTimeEdit",
    "QTimeEdit",
    "QAbstractSpinBox",
    "QDate",
    "QDateTime",
    "QTime",
    "QTreeWidget",  # the Changes pane's list, built after the first draft
    "QTreeWidgetItem",
    "QTreeView",
    "QDialog",  # the reviewer's dialog is asked only without a saved name; the others are made on first use
)

# Dataclasses a launch makes with no docstring of their own: `dataclass` then writes one from
# `inspect.signature(cls)`, ~0.2-0.3 ms a class (32 classes, 6-10 ms of a launch). These two are left to the
# branches that work on their files (the store's write path and the journal).
UNDOCUMENTED_LEFT = {"plur_desk.store.plur_store.WriteResult", "plur_desk.store.journal.Step"}

PROBE = r"""
import gc, json, sys
from plur_desk.ui.app import open_window

win = open_window(sys.argv[1], "Grace Tester", demo=False)  # as `plur-desk STORE --reviewer NAME` starts
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

app = QApplication.instance()
shown = win.opener._drafts_loaded

def drafts_loaded(found):
    shown(found)  # the queue is on screen; the rest of the store is not loaded yet, no index is being built
    print(json.dumps({
        "selected": win.drafts.current() is not None,
        "approve_enabled": win.qactions["review.approve"].isEnabled(),
        "detail": win.drafts.detail.toPlainText().strip()[:80],
        "store_opened": win.session is not None and win.session.fully_loaded,
        "collector_on": gc.isenabled(),  # the launch pauses it while it builds modules and widgets, and only then
        "modules": sorted(sys.modules),
        "qt_classes": sorted(
            name for module in ("PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets")
            for name, value in vars(sys.modules[module]).items() if isinstance(value, type)
        ),
        "undocumented": sorted(
            f"{name}.{value.__qualname__}"
            for name, module in list(sys.modules.items()) if name.startswith("plur_desk")
            for value in list(vars(module).values())
            if isinstance(value, type) and value.__module__ == name and hasattr(value, "__dataclass_fields__")
            and (value.__doc__ or "").startswith(value.__name__ + "(")  # the docstring dataclass wrote
        ),
    }), flush=True)
    app.exit(0)

win.opener._drafts_loaded = drafts_loaded  # the load finishes on the event loop, which starts below
QTimer.singleShot(60000, lambda: app.exit(3))
sys.exit(app.exec())
"""


def test_the_first_draft_is_reviewable_before_any_later_feature_is_imported(tmp_path):
    import shutil

    store = tmp_path / "store"
    shutil.copytree(demo_source(), store)
    config = tmp_path / "config"
    (config / "plur-desk").mkdir(parents=True)
    (config / "plur-desk" / "settings.yaml").write_text("last_reviewer: Grace Tester\n")  # a relaunch
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(config)}
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"  # never a real keyring, should it be touched
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(store), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["selected"] and report["approve_enabled"] and report["detail"], report
    assert not report["store_opened"], "the check must run before the full load"
    assert report["collector_on"]
    loaded = set(report["modules"])
    early = [name for name in LATER if name in loaded]
    assert early == [], f"imported before the first draft was reviewable: {early}"
    made = [name for name in QT_LATER if name in report["qt_classes"]]
    assert made == [], f"Qt classes made before the first draft was reviewable: {made}"
    assert "QTableView" in report["qt_classes"]  # what the queue is shown in is there: the check sees the classes
    undocumented = set(report["undocumented"]) - UNDOCUMENTED_LEFT
    assert not undocumented, (
        f"dataclasses made at launch without a docstring (each costs an inspect.signature): {undocumented}"
    )


def test_an_opened_store_is_remembered_among_the_recent_ones(window, store_copy, tmp_path):
    """Saved once the store is open (after the first draft is shown, so the settings file never delays it)."""
    from plur_desk.app.settings import SettingsStore

    assert window.workspace.settings.recent_stores[0] == str(store_copy)
    window.workspace.settings_store.flush()  # written on the settings thread, not the GUI thread
    assert SettingsStore(tmp_path / "settings.yaml").load().recent_stores[0] == str(store_copy)
