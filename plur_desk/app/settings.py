"""User settings: a pydantic model saved as commented YAML (ruamel round trip) in the platformdirs config dir."""

from __future__ import annotations

import getpass
import io
import subprocess
from pathlib import Path

from pydantic import BaseModel, Field
from ruamel.yaml import YAML

from plur_desk.infra.paths import config_dir

SCHEMA_VERSION = 1
DEFAULT_REASONS = ["duplicate of an existing engram", "not true", "too specific to one task", "contains a secret"]


class Settings(BaseModel):
    schema_version: int = SCHEMA_VERSION
    reviewer_name: str = ""  # the default reviewer, saved only when the person chose to
    last_reviewer: str = ""  # who reviewed in the previous run, to show a change once
    default_level: str = "decided"
    recent_stores: list[str] = Field(default_factory=list)
    recent_reasons: list[str] = Field(default_factory=lambda: list(DEFAULT_REASONS))
    recent_notes: list[str] = Field(default_factory=list)  # approval notes: offered when approving, never reasons
    rubber_stamp_seconds: float = 1.0
    rubber_stamp_run: int = 8


def suggested_reviewer_name() -> str:
    """`git config user.name`, else the login name."""
    try:
        out = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=2)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""


class SettingsStore:
    """Loads and saves Settings; keeps the user's comments and unknown keys in the file."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / "settings.yaml"
        self._yaml = YAML(typ="rt")
        self._doc: object = None

    def load(self) -> Settings:
        if not self.path.exists():
            return Settings()
        try:
            self._doc = self._yaml.load(self.path.read_text(encoding="utf-8"))
            data = dict(self._doc) if isinstance(self._doc, dict) else {}
            return Settings.model_validate(data)
        except Exception:
            return Settings()

    def save(self, settings: Settings) -> None:
        doc = self._doc if isinstance(self._doc, dict) else None
        if doc is None:
            doc = self._yaml.load("# plur_desk settings. Edit freely; unknown keys are kept.\n{}\n") or {}
        for key, value in settings.model_dump().items():
            doc[key] = value
        self._doc = doc
        buffer = io.StringIO()
        self._yaml.dump(doc, buffer)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(buffer.getvalue(), encoding="utf-8")
        tmp.replace(self.path)

    def remember_store(self, settings: Settings, store: str) -> None:
        settings.recent_stores = [store, *[s for s in settings.recent_stores if s != store][:9]]
        self.save(settings)

    def remember_reason(self, settings: Settings, reason: str) -> None:
        settings.recent_reasons = [reason, *[r for r in settings.recent_reasons if r != reason][:11]]
        self.save(settings)

    def remember_note(self, settings: Settings, note: str) -> None:
        settings.recent_notes = [note, *[r for r in settings.recent_notes if r != note][:11]]
        self.save(settings)
