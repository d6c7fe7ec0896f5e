"""Light and dark palettes, the app's own colours (muted text, flag severities), and following the desktop's scheme.

Every colour a label, cell or detail uses comes from here, so both schemes are checked for contrast in one place
(tests/ui/test_theme.py computes WCAG contrast from these very values). The setting is `system` (follow
`QStyleHints.colorScheme()`, and its changes), `light` or `dark`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette

if TYPE_CHECKING:
    from plur_desk.ui.workspace import Workspace

THEMES = ("system", "light", "dark")

LIGHT: dict[str, str] = {
    "window": "#f4f5f7",
    "text": "#1c2024",
    "base": "#ffffff",
    "alternate": "#f0f2f5",
    "button": "#e9ecef",
    "highlight": "#2b5ea7",
    "highlighted_text": "#ffffff",
    "mid": "#a9b0b9",  # borders only, never text
    "muted": "#555d69",  # provenance labels, hints: secondary, still AA on base and alternate rows
    "placeholder": "#5f6773",
    "link": "#1d59b5",
    "danger": "#a4161a",  # instruction-like text, credentials, hidden characters
    "warn": "#7a4d00",  # expired, not yet valid, rejected before, in tension
    "info": "#1f5a85",  # a URL
}
DARK: dict[str, str] = {
    "window": "#1f2329",
    "text": "#e6e8eb",
    "base": "#16191d",
    "alternate": "#22262c",
    "button": "#2a2f36",
    "highlight": "#3d6fb6",
    "highlighted_text": "#ffffff",
    "mid": "#4a505a",
    "muted": "#a8b1bd",
    "placeholder": "#9aa3ae",
    "link": "#8ab4f8",
    "danger": "#ff8f87",
    "warn": "#f0c35a",
    "info": "#8ecbff",
}
SCHEMES = {"light": LIGHT, "dark": DARK}
# Text colours and the backgrounds they are drawn on: what the contrast check covers.
PAIRS = (
    ("text", "window"),
    ("text", "base"),
    ("text", "alternate"),
    ("text", "button"),
    ("highlighted_text", "highlight"),
    ("muted", "base"),
    ("muted", "alternate"),
    ("muted", "window"),
    ("placeholder", "base"),
    ("link", "base"),
    ("danger", "base"),
    ("danger", "alternate"),
    ("warn", "base"),
    ("warn", "alternate"),
    ("info", "base"),
    ("info", "alternate"),
)

_active = {"scheme": "light", "setting": "system"}
_following: list[bool] = []  # the desktop's scheme changes are followed once connected
_listeners: list[tuple[weakref.ref[object], Callable[[], None]]] = []  # told after each change of palette


def listen(owner: object, listener: Callable[[], None]) -> None:
    """Call `listener` after every change of palette (a setting, or the desktop's scheme) while `owner` lives."""
    _listeners.append((weakref.ref(owner), listener))


def luminance(hex_color: str) -> float:
    """WCAG 2 relative luminance of an sRGB colour like #1c2024."""

    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(fg: str, bg: str) -> float:
    """WCAG 2 contrast ratio (1 to 21); AA asks 4.5 for normal text."""
    a, b = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def system_scheme() -> str:
    app = QGuiApplication.instance()
    hints = QGuiApplication.styleHints() if app is not None else None
    return "dark" if hints is not None and hints.colorScheme() == Qt.ColorScheme.Dark else "light"


def resolve(setting: str) -> str:
    return setting if setting in SCHEMES else system_scheme()


def scheme() -> str:
    """The scheme in use now: 'light' or 'dark'."""
    return _active["scheme"]


def color(name: str) -> str:
    """One of the app's colours in the scheme in use, as #rrggbb (for style sheets and rich text)."""
    return SCHEMES[_active["scheme"]][name]


def palette_for(colors: dict[str, str]) -> QPalette:
    p = QPalette()
    R = QPalette.ColorRole
    for role, name in (
        (R.Window, "window"),
        (R.WindowText, "text"),
        (R.Base, "base"),
        (R.AlternateBase, "alternate"),
        (R.Text, "text"),
        (R.Button, "button"),
        (R.ButtonText, "text"),
        (R.Highlight, "highlight"),
        (R.HighlightedText, "highlighted_text"),
        (R.Mid, "mid"),
        (R.ToolTipBase, "base"),
        (R.ToolTipText, "text"),
        (R.PlaceholderText, "placeholder"),
        (R.Link, "link"),
        (R.BrightText, "highlighted_text"),
    ):
        p.setColor(role, QColor(colors[name]))
    for role in (R.WindowText, R.Text, R.ButtonText):  # disabled text: dimmer, still readable
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(colors["placeholder"]))
    return p


def apply(setting: str) -> str:
    """Use `setting` ('system', 'light', 'dark') for the whole application; returns the scheme now in use. With
    'system', a change of the desktop's scheme is followed while the app runs."""
    app = QGuiApplication.instance()
    setting = setting if setting in THEMES else "system"
    _active["setting"] = setting
    _active["scheme"] = resolve(setting)
    if isinstance(app, QGuiApplication):
        app.setPalette(palette_for(SCHEMES[_active["scheme"]]))
        for owner, listener in list(_listeners):  # icons drawn in the text colour, and the like
            try:
                target = owner()
                if target is None or (isinstance(target, QObject) and not shiboken6.isValid(target)):
                    raise RuntimeError("gone")  # a closed window (its Qt object deleted) awaiting collection
                listener()
            except RuntimeError:  # its window was closed (its Qt objects deleted): not told again
                _listeners.remove((owner, listener))
        if not _following:
            QGuiApplication.styleHints().colorSchemeChanged.connect(_desktop_changed)
            _following.append(True)
    return _active["scheme"]


def _desktop_changed(_scheme: object) -> None:
    if _active["setting"] == "system":
        apply("system")


def cycle(workspace: Workspace, refresh: Callable[[], object]) -> str:
    """The View menu's Theme action: the next setting, used at once and saved; the panes are drawn again."""
    settings = workspace.settings
    settings.theme = next_setting(settings.theme)
    workspace.settings_store.save_soon(settings)
    now = apply(settings.theme)
    refresh()
    follows = " (follows the desktop)" if settings.theme == "system" else ""
    workspace.messages.status(f"Theme: {settings.theme}{follows}, {now} now", 5000)
    return now


def next_setting(setting: str) -> str:
    """The setting after `setting` in the View menu's cycle: system → light → dark → system."""
    return THEMES[(THEMES.index(setting) + 1) % len(THEMES)] if setting in THEMES else "light"
