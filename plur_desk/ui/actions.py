"""Every user action, declared once: id, text, shortcut, menu, pane, icon, when it is enabled.

Menus, the toolbar, button captions, the shortcut sheet (F1) and the command palette (Ctrl+K) are all generated
from ACTIONS; a test checks that ids and (pane, shortcut) pairs are unique. What each action does is an explicit
map {action id: callable} that the main window builds from its controllers; `check_handlers` refuses a map with a
missing or an extra id (at start-up, and in a test).
Actions that belong to a pane use single-key shortcuts that fire only while that pane's list itself has the
keyboard focus (WidgetShortcut on the list): a key typed anywhere else (a search field, a button, the detail) is
never a verdict. A pane's actions are disabled, in menus and palette too, while the pane is not shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from plur_desk.ui.common.jobs import Jobs
from plur_desk.ui.common.widgets import dialog_open


@dataclass(frozen=True)
class UiContext:
    """What the window is showing, which decides the actions that are enabled."""

    pane: str = ""  # the pane on screen; "" while no store is shown (start page)
    has_store: bool = False
    read_only: bool = False
    has_selection: bool = False
    multi_selection: bool = False
    can_undo: bool = False
    can_redo: bool = False
    editing: bool = False


Predicate = Callable[[UiContext], bool]


def _writable(ctx: UiContext) -> bool:
    return ctx.has_store and bool(ctx.pane) and not ctx.read_only


def _act_on_selection(ctx: UiContext) -> bool:
    return _writable(ctx) and ctx.has_selection and not ctx.editing


def _store(ctx: UiContext) -> bool:
    return ctx.has_store and bool(ctx.pane)


@dataclass(frozen=True)
class ActionSpec:
    """One action: its text, menu, keys, pane, icon and when it is enabled."""

    id: str
    text: str
    menu: str
    shortcuts: tuple[str | QKeySequence.StandardKey, ...] = ()
    pane: str = ""  # "" = application-wide
    icon: str = ""
    enabled: Predicate | None = None
    tip: str = ""

    def key_text(self) -> str:
        texts = []
        for shortcut in self.shortcuts:
            seq = QKeySequence(shortcut)
            texts.append(seq.toString(QKeySequence.SequenceFormat.NativeText))
        return " or ".join(t for t in texts if t)


# The only actions a held key repeats: moving through the queue. Every other one (a verdict, an undo, a settle) runs
# once per key press: holding A approved a draft per key repeat (~30 a second), each shown for one repeat's time.
REPEATS = frozenset({"review.next", "review.previous", "review.skip"})

ACTIONS: tuple[ActionSpec, ...] = (
    # File
    ActionSpec(
        "file.open",
        "Open Store…",
        "&File",
        (QKeySequence.StandardKey.Open,),
        tip="Open a PLUR store directory",
    ),
    ActionSpec("file.demo", "Open Demo Store", "&File", tip="Open a copy of the bundled demo store"),
    ActionSpec(
        "file.reload",
        "Reload",
        "&File",
        ("F5",),
        icon="reload",
        enabled=_store,
        tip="Re-read the store from disk",
    ),
    ActionSpec(
        "file.identity",
        "Reviewer Identity…",
        "&File",
        enabled=_writable,
        tip="Your signing key: where it lives, rotate it, or revoke a lost one",
    ),
    ActionSpec("file.quit", "Quit", "&File", (QKeySequence.StandardKey.Quit,)),
    # Edit
    ActionSpec(
        "edit.undo",
        "Undo",
        "&Edit",
        ("Ctrl+Z",),
        icon="undo",
        enabled=lambda c: _writable(c) and c.can_undo,
        tip="Undo your last decision (itself recorded)",
    ),
    ActionSpec(
        "edit.redo",
        "Redo",
        "&Edit",
        ("Ctrl+Shift+Z",),
        icon="redo",
        enabled=lambda c: _writable(c) and c.can_redo,
    ),
    ActionSpec("edit.find", "Search", "&Edit", ("Ctrl+F",), icon="search"),
    ActionSpec("edit.palette", "Command Palette…", "&Edit", ("Ctrl+K",)),
    # View
    ActionSpec("view.drafts", "Drafts", "&View", ("Ctrl+1",)),
    ActionSpec("view.tensions", "Tensions", "&View", ("Ctrl+2",)),
    ActionSpec("view.validity", "Validity", "&View", ("Ctrl+3",)),
    ActionSpec("view.history", "History", "&View", ("Ctrl+4",)),
    ActionSpec(
        "view.conflicts",
        "Conflicts",
        "&View",
        ("Ctrl+5",),
        enabled=_store,
        tip="Likely contradictions store-wide, found on this machine (no API key)",
    ),
    ActionSpec("view.clusters", "Clusters", "&View", ("Ctrl+6",)),
    ActionSpec("view.writers", "Writers", "&View", ("Ctrl+7",)),
    ActionSpec("view.changes", "Agent Changes", "&View", ("Ctrl+8",)),
    ActionSpec(
        "view.theme", "Switch Theme (System, Light, Dark)", "&View", tip="Follow the desktop, or light, or dark"
    ),
    # Review (drafts pane)
    ActionSpec(
        "review.approve",
        "Approve",
        "&Review",
        ("A",),
        "drafts",
        "approve",
        _act_on_selection,
        "Approve at the default level (decided)",
    ),
    ActionSpec(
        "review.approve_level",
        "Approve as…",
        "&Review",
        ("Shift+A",),
        "drafts",
        "approve",
        _act_on_selection,
        "Approve choosing the level: exploring, leaning, decided, locked",
    ),
    ActionSpec(
        "review.reject",
        "Reject…",
        "&Review",
        ("R",),
        "drafts",
        "reject",
        _act_on_selection,
        "Reject with a reason; the statement stays rejected if it comes back",
    ),
    ActionSpec(
        "review.edit",
        "Edit Statement",
        "&Review",
        ("E",),
        "drafts",
        "edit",
        _act_on_selection,
        "Edit the statement in place; Ctrl+Return saves",
    ),
    ActionSpec(
        "review.skip",
        "Skip",
        "&Review",
        ("S", "Space"),
        "drafts",
        "skip",
        lambda c: c.has_selection and not c.editing,
        "Next draft without deciding",
    ),
    ActionSpec(
        "review.approve_session",
        "Approve Everything This Session Drafted…",
        "&Review",
        ("Ctrl+Shift+A",),
        "drafts",
        "approve",
        _act_on_selection,
        "The drafts of the current draft's agent session, approved together (flagged ones named, left out unless "
        "included)",
    ),
    ActionSpec(
        "review.reject_session",
        "Reject Everything This Session Drafted…",
        "&Review",
        ("Ctrl+Shift+R",),
        "drafts",
        "reject",
        _act_on_selection,
        "The drafts of the current draft's agent session, rejected together with one reason",
    ),
    ActionSpec("review.next", "Next", "&Review", ("J",), "drafts", enabled=lambda c: not c.editing),
    ActionSpec("review.previous", "Previous", "&Review", ("K",), "drafts", enabled=lambda c: not c.editing),
    ActionSpec(
        "review.risk_order",
        "Risk Order / Age Order",
        "&Review",
        ("O",),
        "drafts",
        enabled=lambda c: c.has_store and not c.editing,
        tip="Put first what most needs a careful look (hover the Risk column for the factors), or oldest first",
    ),
    # Clusters pane
    ActionSpec(
        "clusters.settle",
        "Settle Cluster",
        "&Review",
        ("D",),
        "clusters",
        "approve",
        _act_on_selection,
        "Approve the representative (if a draft) and reject every other draft as its duplicate, linked to it",
    ),
    ActionSpec(
        "clusters.keep_member",
        "Keep Selected Member",
        "&Review",
        ("Shift+D",),
        "clusters",
        "approve",
        _act_on_selection,
        "Keep the member selected below instead of the representative",
    ),
    ActionSpec(
        "clusters.split",
        "Take Out of Cluster",
        "&Review",
        ("X",),
        "clusters",
        "split",
        lambda c: c.has_store and c.has_selection,
        "Not a duplicate: decide the selected member on its own",
    ),
    # Changes pane: what agents changed around the draft gate since the watched baseline
    ActionSpec(
        "changes.ratify",
        "Ratify Agent Change",
        "&Review",
        ("A",),
        "changes",
        "approve",
        _act_on_selection,
        "Let the agent's change stand: a signed decision, and its values join the watched baseline",
    ),
    ActionSpec(
        "changes.revert",
        "Revert Agent Change",
        "&Review",
        ("R",),
        "changes",
        "reject",
        _act_on_selection,
        "Put the baseline's values back (a promoted draft is a draft again, a rewrite restored, a settled tension "
        "reopened); undoable",
    ),
    ActionSpec(
        "changes.start",
        "Start Watching",
        "&Review",
        ("W",),
        "changes",
        enabled=_writable,
        tip="Record the store's current state, signed with your key: agent changes after it are listed",
    ),
    # Tensions pane
    ActionSpec(
        "tension.confirm",
        "Confirm Tension",
        "&Tensions",
        ("C",),
        "tensions",
        "confirm",
        _act_on_selection,
        "A real conflict, to be resolved",
    ),
    ActionSpec(
        "tension.dismiss",
        "Dismiss Tension",
        "&Tensions",
        ("D",),
        "tensions",
        "reject",
        _act_on_selection,
        "Not a conflict; PLUR will not raise this pair again",
    ),
    ActionSpec(
        "tension.keep_left",
        "Keep Left",
        "&Tensions",
        ("1", "Left"),
        "tensions",
        "approve",
        _act_on_selection,
        "Keep the left engram, retire the right one (preview first)",
    ),
    ActionSpec(
        "tension.keep_right",
        "Keep Right",
        "&Tensions",
        ("2", "Right"),
        "tensions",
        "approve",
        _act_on_selection,
        "Keep the right engram, retire the left one (preview first)",
    ),
    ActionSpec(
        "tension.split",
        "Split in Time…",
        "&Tensions",
        ("T",),
        "tensions",
        "split",
        _act_on_selection,
        "Both were true, at different times: pick the date",
    ),
    # Validity pane
    ActionSpec(
        "validity.edit",
        "Edit Window…",
        "&Validity",
        ("W",),
        "validity",
        "edit",
        _act_on_selection,
        "Set or clear valid_from / valid_until",
    ),
    ActionSpec(
        "validity.open",
        "Validity Window of Selected Engram",
        "&Validity",
        ("Ctrl+Shift+W",),
        "",
        "edit",
        _store,
        "Show the selected engram in the Validity pane to give it a window",
    ),
    ActionSpec(
        "validity.expire",
        "Expire Now",
        "&Validity",
        ("X",),
        "validity",
        "reject",
        _act_on_selection,
        "End the selected engrams' validity now",
    ),
    # History pane
    ActionSpec("history.export_csv", "Export View as CSV…", "&History", (), "history", enabled=_store),
    ActionSpec("history.export_jsonl", "Export View as JSONL…", "&History", (), "history", enabled=_store),
    ActionSpec(
        "history.timeline",
        "Engram Timeline",
        "&History",
        ("Ctrl+T",),
        "",
        enabled=_store,
        tip="Everything that happened to the selected engram",
    ),
    ActionSpec(
        "history.revert_change", "Revert This Agent Change…", "&History", ("R",), "history", "reject", _act_on_selection
    ),
    # Team (a store shared through git)
    ActionSpec(
        "team.disagreements",
        "Team Disagreements…",
        "Tea&m",
        ("Ctrl+Shift+D",),
        enabled=_store,
        tip="Where reviewers on other machines decided differently; settle each",
    ),
    ActionSpec(
        "team.sync",
        "Sync with Team",
        "Tea&m",
        ("Ctrl+Shift+S",),
        enabled=_writable,
        tip="Fetch, merge and push the store under PLUR's lock",
    ),
    # Help
    ActionSpec("help.shortcuts", "Keyboard Shortcuts", "&Help", ("F1",)),
    ActionSpec("help.about", "About plur_desk", "&Help"),
)

MENU_ORDER = ("&File", "&Edit", "&View", "&Review", "&Tensions", "&Validity", "&History", "Tea&m", "&Help")


Handlers = dict[str, Callable[[], object]]


def check_handlers(handlers: Handlers) -> None:
    """Every action in ACTIONS has exactly one handler, and every handler an action; ValueError otherwise."""
    ids = {spec.id for spec in ACTIONS}
    missing, extra = sorted(ids - handlers.keys()), sorted(handlers.keys() - ids)
    if missing or extra:
        raise ValueError(f"action handlers do not match ACTIONS: missing {missing}, extra {extra}")
    not_callable = sorted(k for k, v in handlers.items() if not callable(v))
    if not_callable:
        raise ValueError(f"action handlers that cannot be called: {not_callable}")


def build_actions(
    owner: QWidget,
    panes: dict[str, QWidget],
    handlers: Handlers,
    icon_of: Callable[[str], object],
    queues: dict[str, Callable[[QAction], object]] | None = None,
    jobs: Jobs | None = None,
) -> dict[str, QAction]:
    """QActions for ACTIONS, parented to the main window or to their pane; a pane action's keys are live only
    while that pane's list has the focus (`queues[pane](action)` adds the action to the list, at once or when the
    pane's widgets are built). `jobs` step aside for the window's work on each action (ui/common/jobs.py)."""
    check_handlers(handlers)
    queues = queues or {}
    actions: dict[str, QAction] = {}
    for spec in ACTIONS:
        parent = panes.get(spec.pane, owner)
        action = QAction(spec.text, parent)
        action.setObjectName(spec.id)
        action.setAutoRepeat(spec.id in REPEATS)  # a held key is one decision, never one per key repeat
        if spec.shortcuts:
            action.setShortcuts([QKeySequence(s) for s in spec.shortcuts])
        if spec.pane in queues:
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            queues[spec.pane](action)
        elif spec.pane:  # a pane without verdicts (Writers): its keys work anywhere inside it
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            parent.addAction(action)
        else:
            action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
            owner.addAction(action)
        if spec.icon:
            action.setIcon(icon_of(spec.icon))  # type: ignore[arg-type]
        tip = spec.tip or spec.text
        key = spec.key_text()
        action.setToolTip(f"{tip} ({key})" if key else tip)
        action.setStatusTip(tip)
        handler = handlers[spec.id]
        action.triggered.connect(lambda _checked=False, run=handler: _run_action(run, jobs))
        actions[spec.id] = action
    return actions


def _run_action(handler: Callable[[], object], jobs: Jobs | None) -> None:
    if dialog_open():  # a key typed into a dialog that has not taken the focus yet: it was meant for the dialog
        return
    if jobs is not None:
        jobs.window_busy()  # the jobs this action starts wait for the window's own work on it (infra/window_first.py)
        jobs.reviewer_acted()  # and analytics for the run of actions it may be part of
    handler()


def is_enabled(spec: ActionSpec, ctx: UiContext) -> bool:
    """A pane's action only while that pane is on screen; then its own predicate."""
    if spec.pane and ctx.pane != spec.pane:
        return False
    return spec.enabled(ctx) if spec.enabled is not None else True


def recolor_icons(actions: dict[str, QAction], icon_of: Callable[[str], object]) -> None:
    """The actions' icons drawn again in the palette's text colour (after a change of theme)."""
    for spec in ACTIONS:
        if spec.icon:
            actions[spec.id].setIcon(icon_of(spec.icon))  # type: ignore[arg-type]


def update_enabled(actions: dict[str, QAction], ctx: UiContext) -> None:
    """Each action on or off for `ctx`; one that is off says why in its tooltip (and so on its button)."""
    for spec in ACTIONS:
        action, on = actions[spec.id], is_enabled(spec, ctx)
        action.setEnabled(on)
        base = str(action.property("base_tip") or action.toolTip())
        action.setProperty("base_tip", base)
        action.setToolTip(base if on else f"{base}\nNot available now: {why_off(spec, ctx)}.")


def why_off(spec: ActionSpec, ctx: UiContext) -> str:
    """Why `spec` is off in `ctx`, as the reviewer can act on it (the predicates' conditions, in their order)."""
    if not ctx.has_store or not ctx.pane:
        return "open a store first (File > Open Store…)"
    if spec.pane and ctx.pane != spec.pane:
        return f"it acts in the {spec.pane.title()} pane, which is not shown"
    if ctx.editing:
        return "finish the edit first (Ctrl+Return saves, Esc cancels)"
    if spec.id == "edit.undo" and ctx.can_undo is False and not ctx.read_only:
        return "nothing to undo yet"
    if spec.id == "edit.redo" and ctx.can_redo is False and not ctx.read_only:
        return "nothing to redo"
    if ctx.read_only:
        return "the store is open read-only (see the notice above the status bar)"
    if not ctx.has_selection:
        return "select a row first"
    return "not with what is selected"
