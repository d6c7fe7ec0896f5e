"""Settings are read on the launch path without pydantic or ruamel, yet exactly as ruamel + pydantic read them.

The reference below is the reader as it was before the small reader existed (a pydantic model of the same fields,
the file loaded by ruamel's round trip, the defaults on any failure). Every generated file, valid or not, must give
the same settings through `SettingsStore.load`; the small reader must actually take the files we write ourselves.
"""

from __future__ import annotations

import dataclasses
import string
import sys
import threading
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from ruamel.yaml import YAML

from plur_desk.app.settings import DEFAULT_REASONS, Settings, SettingsStore, read_simple


class ReferenceSettings(BaseModel):
    schema_version: int = 1
    reviewer_name: str = ""
    last_reviewer: str = ""
    default_level: str = "decided"
    recent_stores: list[str] = Field(default_factory=list)
    recent_reasons: list[str] = Field(default_factory=lambda: list(DEFAULT_REASONS))
    recent_notes: list[str] = Field(default_factory=list)
    rubber_stamp_seconds: float = Field(1.0, allow_inf_nan=False)  # NaN compares false: it would disarm the guard
    rubber_stamp_run: int = 8
    theme: str = "system"


def reference_load(text: str) -> dict[str, object]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ruamel warns about reused anchors in some generated files
            doc = YAML(typ="rt").load(text)
        data = dict(doc) if isinstance(doc, dict) else {}
        return ReferenceSettings.model_validate(data).model_dump()
    except Exception:
        return ReferenceSettings().model_dump()


def load(tmp_path: Path, text: str) -> dict[str, object]:
    path = tmp_path / "settings.yaml"
    path.write_text(text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dataclasses.asdict(SettingsStore(path).load())


def same(a: dict[str, object], b: dict[str, object]) -> bool:
    """Equal values of equal types (1 is not 1.0 here: a float field must hold a float)."""
    return a == b and all(type(a[k]) is type(b[k]) for k in a)


# Text that stresses YAML's typing: numbers, dates, booleans and nulls of YAML 1.1 and 1.2, indicators, quotes.
TRICKY = [
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "true",
    "False",
    "null",
    "Null",
    "~",
    "",
    " ",
    "0",
    "007",
    "1.0",
    "1e3",
    ".5",
    "-1",
    "+1",
    "0x1F",
    "0o17",
    "1_000",
    "2026-12-03",
    "12:30",
    ".inf",
    ".NaN",
    "=",
    "<<",
    "- x",
    "? x",
    ": x",
    "a: b",
    "a:b",
    "#x",
    "a #b",
    "a#b",
    "'q'",
    '"q"',
    "it's",
    'say "hi"',
    "C:\\temp",
    "[a]",
    "{a}",
    "a, b",
    "&a",
    "*a",
    "!a",
    "|",
    ">",
    "%x",
    "@x",
    "`x",
    "José Núñez-O'Brien",
    "tab\there",
    "line\nbreak",
    "\u2028",
    "\x85",
    "\ufeff",
    "\x7f",
    "trailing ",
    " leading",
    "~/store",
    "/home/ada/.plur",
    "(x)",
    "_x",
    "Ada Lovelace",
]
words = st.one_of(st.sampled_from(TRICKY), st.text(string.printable + "éñ’ü", max_size=12))
nice = st.from_regex(r"[A-Za-zé/_~][A-Za-z0-9é/_.:'\" #,-]{0,10}", fullmatch=True)
numbers = st.one_of(st.integers(-5, 1000), st.floats(allow_nan=False, allow_infinity=False, width=32))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=words,
    level=words,
    stores=st.lists(words, max_size=4),
    notes=st.lists(words, max_size=4),
    seconds=numbers,
    run=st.integers(0, 50),
)
def test_files_we_write_read_the_same_as_ruamel_and_pydantic_read_them(
    tmp_path, name, level, stores, notes, seconds, run
):
    path = tmp_path / "settings.yaml"
    written = Settings(
        reviewer_name=name,
        default_level=level,
        recent_stores=stores,
        recent_notes=notes,
        rubber_stamp_seconds=float(seconds),
        rubber_stamp_run=run,
    )
    SettingsStore(path).save(written)
    text = path.read_text(encoding="utf-8")
    ours = dataclasses.asdict(SettingsStore(path).load())
    assert same(ours, reference_load(text)), text


# Lines of every shape the small reader accepts or must refuse, assembled into files at random.
KEYS = [
    "schema_version",
    "reviewer_name",
    "last_reviewer",
    "default_level",
    "recent_stores",
    "recent_reasons",
    "recent_notes",
    "rubber_stamp_seconds",
    "rubber_stamp_run",
    "unknown_key",
    "true",
    "Reviewer_name",
]
VALUES = [
    *TRICKY,
    "1",
    "2",
    "8",
    "0.25",
    "1.5",
    "[]",
    "[a, b]",
    "{}",
    "'it''s'",
    '"a\\tb"',
    "'open",
    '"open',
    "'a' # c",
    "x # c",
    "''",
    '""',
]


@st.composite
def yaml_files(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        shape = draw(st.integers(0, 6))
        key = draw(st.sampled_from(KEYS))
        if shape <= 2:
            lines.append(f"{key}: {draw(st.sampled_from(VALUES))}")
        elif shape == 3:
            lines.append(f"{key}:")
            indent = draw(st.sampled_from(["", "  ", " "]))
            for _ in range(draw(st.integers(0, 3))):
                lines.append(
                    f"{draw(st.sampled_from([indent, indent, '    ', chr(9)]))}- {draw(st.sampled_from(VALUES))}"
                )
        elif shape == 4:
            lines.append(draw(st.sampled_from(["# a comment", "  # indented comment", "", "   ", "---", "..."])))
        elif shape == 5:
            lines.append(draw(st.sampled_from(["  continued", "- stray", "key without colon", "%YAML 1.1", "\t"])))
        else:
            lines.append(f"{key}:{draw(st.sampled_from(VALUES))}")
    ending = draw(st.sampled_from(["\n", "", "\r\n", "\n\n"]))
    return ending.join(lines) + ending


def _as_scalar(draw: st.DrawFn, text: str) -> str:
    style = draw(st.integers(0, 3))
    if style == 1:
        return "'" + text.replace("'", "''") + "'"
    if style == 2:
        return '"' + text + '"'
    return text


@st.composite
def plausible_files(draw: st.DrawFn) -> str:
    """Files a person might write: distinct keys, scalars plain or quoted, lists in one indentation."""
    lines = [draw(st.sampled_from(["", "# settings"]))]
    for key in draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=6)):
        if key in ("recent_stores", "recent_reasons", "recent_notes", "unknown_key") and draw(st.booleans()):
            items = draw(st.lists(st.one_of(nice, nice, words), max_size=3))
            indent = draw(st.sampled_from(["", "  "]))
            lines += [f"{key}:" if items else f"{key}: []"] + [f"{indent}- {_as_scalar(draw, i)}" for i in items]
        else:
            typed = key in ("schema_version", "rubber_stamp_seconds", "rubber_stamp_run")
            value = draw(st.one_of(numbers.map(str), words) if typed else st.one_of(nice, nice, nice, words))
            lines.append(f"{key}: {_as_scalar(draw, value)}")
    return "\n".join(lines) + "\n"


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(yaml_files(), plausible_files()))
def test_any_file_reads_the_same_as_ruamel_and_pydantic_read_it(tmp_path, text):
    assert same(load(tmp_path, text), reference_load(text)), repr(text)


@pytest.mark.parametrize(
    "text",
    [
        "rubber_stamp_run: '8'\n",  # a numeric string coerced by validation
        "rubber_stamp_run: 8.0\n",
        "reviewer_name: 12\n",  # not a string: the defaults
        "recent_stores:\n- 1\n- /a\n",
        "recent_stores:\n",  # null
        "reviewer_name: [\n",  # not YAML
        "- a\n- b\n",  # not a mapping
        "reviewer_name: Ada\nreviewer_name: Bob\n",  # a duplicate key: ruamel refuses it
        "\ufeffreviewer_name: Ada\n",
        "reviewer_name: yes\n",
        "reviewer_name: Ada # the default\n",
        "schema_version: 007\n",
        "reviewer_name: yes\ntrue: yes\n",  # a key that is not a string
    ],
)
def test_files_the_small_reader_leaves_to_ruamel(tmp_path, text):
    assert read_simple(text) is None
    assert same(load(tmp_path, text), reference_load(text))


def test_an_int_where_a_float_is_wanted_is_a_float_either_way(tmp_path):
    text = "reviewer_name: Ada\nrubber_stamp_seconds: 2\n"
    assert read_simple(text) == Settings(reviewer_name="Ada", rubber_stamp_seconds=2.0)
    assert same(load(tmp_path, text), reference_load(text))


def test_the_usual_file_is_read_without_ruamel_or_pydantic(tmp_path):
    path = tmp_path / "settings.yaml"
    SettingsStore(path).save(
        Settings(reviewer_name="José Núñez-O'Brien", recent_stores=["/home/ada/.plur", "/tmp/a b"], recent_notes=["ok"])
    )
    text = "# my settings\n" + path.read_text(encoding="utf-8") + "extra: kept\n"
    path.write_text(text, encoding="utf-8")
    assert read_simple(text) is not None
    assert same(load(tmp_path, text), reference_load(text))
    code = (
        "import sys; from pathlib import Path; from plur_desk.app.settings import SettingsStore; "
        f"s = SettingsStore(Path({str(path)!r})).load(); assert s.reviewer_name.startswith('José'), s; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'ruamel')))"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_saving_keeps_comments_and_unknown_keys_of_a_file_read_by_the_small_reader(tmp_path):
    path = tmp_path / "settings.yaml"
    path.write_text("# keep me\nreviewer_name: Ada\nextra: kept  # and me\n", encoding="utf-8")
    store = SettingsStore(path)
    loaded = store.load()
    store.remember_store(loaded, "/stores/one")
    store.flush()  # saved on the settings thread
    text = path.read_text(encoding="utf-8")
    assert "# keep me" in text and "extra: kept  # and me" in text and "- /stores/one" in text
    assert SettingsStore(path).load().recent_stores == ["/stores/one"]


def test_remembering_the_store_already_first_writes_nothing(tmp_path):
    path = tmp_path / "settings.yaml"
    store = SettingsStore(path)
    loaded = store.load()
    store.remember_store(loaded, "/stores/one")
    store.flush()
    before = path.stat().st_ino, path.read_bytes()  # a save replaces the file: a new inode
    store.remember_store(loaded, "/stores/one")
    store.flush()
    assert (path.stat().st_ino, path.read_bytes()) == before


def test_the_window_s_saves_run_on_a_thread_of_their_own_and_land_newest_last(tmp_path, monkeypatch):
    """remember_store/reason/note (asked for on the GUI thread, during a decision or right after a load) hand a
    copy to the settings thread and return; saves asked for while one is written land in order, newest last."""
    from plur_desk.app import settings as settings_module

    path = tmp_path / "settings.yaml"
    path.write_text("# keep me\nreviewer_name: Ada\n", encoding="utf-8")
    real_yaml = settings_module._yaml
    first_write, release = threading.Event(), threading.Event()
    threads: list[threading.Thread] = []

    def slow_yaml():  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        first_write.set()
        release.wait(10)  # the first write waits until every later save was asked for
        return real_yaml()

    monkeypatch.setattr(settings_module, "_yaml", slow_yaml)
    store = SettingsStore(path)
    loaded = store.load()
    store.remember_store(loaded, "/stores/one")
    assert first_write.wait(10)  # the settings thread is writing; this thread went on
    store.remember_reason(loaded, "not true here")
    store.remember_note(loaded, "checked with the team")
    store.remember_store(loaded, "/stores/two")
    loaded.recent_notes.append("changed after the save was asked for: never saved")
    release.set()
    store.flush()
    assert threads and all(t is not threading.main_thread() for t in threads)
    again = SettingsStore(path).load()
    assert again.recent_stores == ["/stores/two", "/stores/one"] and again.recent_reasons[0] == "not true here"
    assert again.recent_notes == ["checked with the team"] and again.reviewer_name == "Ada"
    assert "# keep me" in path.read_text(encoding="utf-8")


_SAVE_AND_EXIT = r"""
import os, sys
from pathlib import Path
from plur_desk.app.settings import SettingsStore
store = SettingsStore(Path(sys.argv[1]))
settings = store.load()
if len(sys.argv) > 2:
    os.environ["PLUR_DESK_CRASH_AT"] = sys.argv[2]
store.remember_store(settings, "/stores/new")
"""  # no flush: the interpreter waits for the settings thread at exit


@pytest.mark.parametrize(
    ("crash_at", "kept"),
    [(None, "/stores/new"), ("settings-temp-written", "/stores/old"), ("settings-renamed", "/stores/new")],
)
def test_a_save_in_the_background_lands_at_exit_and_a_kill_keeps_old_or_new_settings(tmp_path, crash_at, kept):
    import os
    import signal
    import subprocess

    path = tmp_path / "settings.yaml"
    SettingsStore(path).save(Settings(reviewer_name="Ada", recent_stores=["/stores/old"]))
    args = [sys.executable, "-c", _SAVE_AND_EXIT, str(path), *([crash_at] if crash_at else [])]
    out = subprocess.run(args, capture_output=True, text=True, check=False, env=dict(os.environ, PLUR_DESK_CRASH_AT=""))
    assert out.returncode == (-signal.SIGKILL if crash_at else 0), out.stderr
    again = SettingsStore(path).load()  # never a cut-off file read as the defaults
    assert again.reviewer_name == "Ada" and again.recent_stores[0] == kept


@pytest.mark.parametrize("word", ["NAN", ".nan", ".inf", "-.Inf"])
def test_a_number_of_seconds_that_is_not_finite_gives_the_defaults(tmp_path, word) -> None:
    """NaN compares false with every duration: a rubber-stamp threshold of NaN would never warn."""
    loaded = load(tmp_path, f"reviewer_name: Ada\nrubber_stamp_seconds: {word}\n")
    assert loaded["rubber_stamp_seconds"] == 1.0
