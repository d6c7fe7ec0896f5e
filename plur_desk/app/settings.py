"""User settings: a dataclass saved as commented YAML (ruamel round trip) in the platformdirs config dir.

Reading them is on the launch path, so the usual file (the simple mapping we write ourselves) is read by a small
reader and pydantic and ruamel are not imported for it. The small reader accepts only a subset of YAML in which it
is certain to read what ruamel reads, with values of exactly the field types; for anything else (another layout,
a value that needs coercing or is invalid, a YAML error) it gives up and the file is read as before: ruamel, then
pydantic's validation of the same fields, and the defaults when either fails. Either way the result is the same
(`tests/unit/app/test_settings.py` compares them on generated files, valid and invalid).
"""

from __future__ import annotations

import dataclasses
import functools
import io
import re
import subprocess
import threading
from copy import deepcopy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plur_desk.infra.paths import config_dir

SCHEMA_VERSION = 1
DEFAULT_REASONS = ["duplicate of an existing engram", "not true", "too specific to one task", "contains a secret"]


@dataclass
class Settings:
    """The person's settings (reviewer, recent stores and reasons, theme, …), as kept in settings.yaml."""

    schema_version: int = SCHEMA_VERSION
    reviewer_name: str = ""  # the default reviewer, saved only when the person chose to
    last_reviewer: str = ""  # who reviewed in the previous run, to show a change once
    default_level: str = "decided"
    recent_stores: list[str] = field(default_factory=list)
    recent_reasons: list[str] = field(default_factory=lambda: list(DEFAULT_REASONS))
    recent_notes: list[str] = field(default_factory=list)  # approval notes: offered when approving, never reasons
    rubber_stamp_seconds: float = 1.0
    rubber_stamp_run: int = 8
    theme: str = "system"  # system (follow the desktop's colour scheme), light or dark


_FIELD_TYPES: dict[str, Any] = {
    "schema_version": int,
    "reviewer_name": str,
    "last_reviewer": str,
    "default_level": str,
    "recent_stores": list[str],
    "recent_reasons": list[str],
    "recent_notes": list[str],
    "rubber_stamp_seconds": float,
    "rubber_stamp_run": int,
    "theme": str,
}
_LISTS = frozenset(name for name, kind in _FIELD_TYPES.items() if kind == list[str])
assert set(_FIELD_TYPES) == {f.name for f in dataclasses.fields(Settings)}


def suggested_reviewer_name() -> str:
    """`git config user.name`, else the login name."""
    try:
        out = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=2)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    import getpass  # only when no reviewer name is known (a relaunch never asks): it imports termios

    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""


# -- the small reader -------------------------------------------------------------------------------------------

# Characters YAML forbids (ruamel refuses the file) or reads as line breaks (\x85, U+2028, U+2029), a BOM, tabs:
# the small reader leaves all of these to ruamel.
_UNSURE_ASCII = re.compile("[^\x0a\x20-\x7e]")


@functools.cache
def _unsure_chars() -> re.Pattern[str]:
    """Compiled on first use (4 ms, at every launch otherwise): only a file with non-ASCII text needs it."""
    return re.compile("[^\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _unsure_text(text: str) -> bool:
    """Characters the small reader leaves to the full one: controls, line and paragraph separators, surrogates."""
    return bool((_UNSURE_ASCII if text.isascii() else _unsure_chars()).search(text))


_KEY_LINE = re.compile(r"([a-z_][a-z0-9_]*):(?: +(.*))?")
_ITEM_LINE = re.compile(r"( *)- (.*)")
_INT = re.compile(r"0|[1-9][0-9]*")
_FLOAT = re.compile(r"(?:0|[1-9][0-9]*)\.[0-9]+")
_SINGLE_QUOTED = re.compile(r"'((?:[^']|'')*)'")
_DOUBLE_QUOTED = re.compile(r'"([^"\\]*)"')
# Words some YAML version reads as null or a boolean, and the merge and value keys: never a plain string here.
_SPECIAL_WORDS = frozenset(["null", "true", "false", "yes", "no", "on", "off", "y", "n", "~", "=", "<<"])


class _Unsure(Exception):
    """The small reader cannot be certain what ruamel reads here."""


def _scalar(text: str) -> object:
    """One scalar as ruamel (YAML 1.2) types it: str, int or float; _Unsure for anything else."""
    if text.startswith("'"):
        if (match := _SINGLE_QUOTED.fullmatch(text)) is None:
            raise _Unsure
        return match.group(1).replace("''", "'")
    if text.startswith('"'):
        if (match := _DOUBLE_QUOTED.fullmatch(text)) is None:
            raise _Unsure
        return match.group(1)
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    first = text[:1]
    plain = (first.isalpha() or first in "/_(" or (first == "~" and len(text) > 1)) and text.isprintable()
    if not plain or ": " in text or " #" in text or text.endswith(":") or text.lower() in _SPECIAL_WORDS:
        raise _Unsure
    return text


def _mapping(text: str) -> dict[str, object]:
    """The top-level mapping of a file in the small reader's subset: `key: scalar`, `key: []`, or `key:` followed
    by `- scalar` lines, with blank and comment lines anywhere; _Unsure for anything else."""
    if _unsure_text(text):
        raise _Unsure
    found: dict[str, object] = {}
    items: list[object] | None = None  # the list being read, under the last key
    indent: str | None = None
    for raw in text.split("\n"):
        line = raw.rstrip(" ")
        if not line or line.lstrip(" ").startswith("#"):
            continue
        item = _ITEM_LINE.fullmatch(line)
        if item is not None and items is not None and indent in (None, item.group(1)):
            indent = item.group(1)
            items.append(_scalar(item.group(2)))
            continue
        key = _KEY_LINE.fullmatch(line)
        if key is None or key.group(1) in found or key.group(1) in _SPECIAL_WORDS:
            raise _Unsure
        if items is not None and not items:
            raise _Unsure  # `key:` with nothing under it is null
        value = key.group(2)
        items, indent = None, None
        if value is None:
            items = []
            found[key.group(1)] = items
        elif value == "[]":
            found[key.group(1)] = []
        else:
            found[key.group(1)] = _scalar(value)
    if items is not None and not items:
        raise _Unsure
    return found


def _exactly_typed(data: dict[str, object]) -> Settings:
    """Settings from values that are exactly of each field's type (what validation would return unchanged)."""
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name not in _FIELD_TYPES:
            continue  # an unknown key is kept in the file and ignored here, as validation ignores it
        if name in _LISTS:
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise _Unsure
        elif _FIELD_TYPES[name] is float:
            if type(value) not in (int, float):
                raise _Unsure
            value = float(value)  # type: ignore[arg-type]
        elif type(value) is not _FIELD_TYPES[name]:
            raise _Unsure
        values[name] = value
    return Settings(**values)


def read_simple(text: str) -> Settings | None:
    """The settings in `text` when the small reader is certain of them, else None (read them with `read_full`)."""
    try:
        return _exactly_typed(_mapping(text))
    except _Unsure:
        return None


def _yaml() -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="rt")


def _round_trip(text: str) -> object:
    """The round-trip document of `text` (what saving updates, keeping comments and unknown keys); None when ruamel
    cannot read it."""
    try:
        return _yaml().load(text)
    except Exception:
        return None


def read_full(text: str) -> tuple[Settings, object]:
    """The settings in `text` read by ruamel and validated by pydantic (the defaults when either fails), and the
    round-trip document (None when ruamel could not read it)."""
    try:
        doc = _yaml().load(text)
    except Exception:
        return Settings(), None
    try:
        data = dict(doc) if isinstance(doc, dict) else {}
        return Settings(**_model().model_validate(data).model_dump()), doc
    except Exception:
        return Settings(), doc


@functools.cache
def _model() -> Any:
    """The pydantic model of Settings' fields (built on first use: only files the small reader leaves need it)."""
    from pydantic import Field, create_model

    fields: dict[str, Any] = {}
    for spec in dataclasses.fields(Settings):
        default = (
            spec.default if spec.default_factory is dataclasses.MISSING else Field(default_factory=spec.default_factory)
        )
        if _FIELD_TYPES[spec.name] is float:  # NaN or infinity is no number of seconds (NaN disarmed the guard)
            default = Field(default=spec.default, allow_inf_nan=False)
        fields[spec.name] = (_FIELD_TYPES[spec.name], default)
    return create_model("SettingsModel", **fields)


class SettingsStore:
    """Loads and saves Settings; keeps the user's comments and unknown keys in the file.

    Saving imports ruamel and dumps the document (tens of milliseconds, more the first time): the window asks for
    it with `save_soon`, which hands a copy of the settings to a thread of its own and returns. Saves asked for
    while one is under way are coalesced, the newest copy last, so an older copy never lands over a newer one;
    `flush()` waits for them (the window does when it closes; the thread is not a daemon, so the interpreter waits
    for it at exit too). The file is replaced atomically and durably (temp file, fsync, rename, directory fsync): a
    crash at any moment leaves the previous settings or the new ones, never a cut-off file."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / "settings.yaml"
        self._text: str | None = None  # the file as loaded; parsed by ruamel only when saving needs it
        self._doc: object = None
        self._parsed = False
        self._lock = threading.Lock()
        self._pending: Settings | None = None  # the newest copy not written yet
        self._writer: threading.Thread | None = None
        self._error: OSError | None = None  # why the last save in the background failed

    def load(self) -> Settings:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            return Settings()
        self._text, self._doc, self._parsed = text, None, False
        simple = read_simple(text)
        if simple is not None:
            return simple
        settings, self._doc = read_full(text)
        self._parsed = True
        return settings

    def save(self, settings: Settings) -> None:
        """Save now: returns once the file is written (raises OSError when it cannot be)."""
        self.save_soon(settings)
        self.flush()

    def save_soon(self, settings: Settings) -> None:
        """Save a copy of `settings` as they are now, on the settings thread; returns at once."""
        copy = deepcopy(settings)  # the caller goes on changing its own
        with self._lock:
            self._pending = copy
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_pending, name="plur-desk-settings")
                self._writer.start()

    def flush(self) -> None:
        """Wait until every save asked for is written; raise the OSError of one that failed since the last flush."""
        with self._lock:
            writer = self._writer
        if writer is not None:
            writer.join()
        with self._lock:
            error, self._error = self._error, None
        if error is not None:
            raise error

    def _write_pending(self) -> None:
        while True:
            with self._lock:
                settings, self._pending = self._pending, None
                if settings is None:
                    self._writer = None
                    return
            try:
                self._write(settings)
            except OSError as exc:
                with self._lock:
                    self._error = exc

    def _write(self, settings: Settings) -> None:
        if not self._parsed and self._text is not None:
            self._doc = _round_trip(self._text)
        self._parsed = True
        yaml = _yaml()
        doc = self._doc if isinstance(self._doc, dict) else None
        if doc is None:
            doc = yaml.load("# plur_desk settings. Edit freely; unknown keys are kept.\n{}\n") or {}
        for key, value in dataclasses.asdict(settings).items():
            doc[key] = value
        self._doc = doc
        buffer = io.StringIO()
        yaml.dump(doc, buffer)
        from plur_desk.store.atomic import atomic_write

        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, buffer.getvalue().encode("utf-8"), crash_label="settings")

    def remember_store(self, settings: Settings, store: str) -> None:
        if settings.recent_stores[:1] == [store]:
            return  # already the most recent: nothing would change
        settings.recent_stores = [store, *[s for s in settings.recent_stores if s != store][:9]]
        self.save_soon(settings)

    def remember_reason(self, settings: Settings, reason: str) -> None:
        settings.recent_reasons = [reason, *[r for r in settings.recent_reasons if r != reason][:11]]
        self.save_soon(settings)

    def remember_note(self, settings: Settings, note: str) -> None:
        settings.recent_notes = [note, *[r for r in settings.recent_notes if r != note][:11]]
        self.save_soon(settings)
