"""The layer rule (HOUSE-STYLE.md §1), a module-size budget and a folder budget, checked on the source with ast."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "plur_desk"
ALLOWED = {
    "infra": {"infra"},
    "domain": {"domain", "infra"},
    "store": {"store", "domain", "infra"},
    "index": {"index", "domain", "infra"},
    "app": {"app", "domain", "store", "index", "infra"},
    "ui": {"ui", "app", "domain", "infra"},
}
QT = ("PySide6", "shiboken6")


def _name(path: Path) -> str:
    """The dotted module name of a file in the package (a package's __init__.py names the package)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _path(name: str) -> Path:
    """The file of a module named with dots (the inverse of _name for a module)."""
    return PACKAGE.parent.joinpath(*name.split(".")).with_suffix(".py")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import"
            found.append((node.lineno, node.module or ""))
            # `from plur_desk.ui.common import icons` imports the module plur_desk.ui.common.icons (a name of a module is harmless)
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names if node.module]
    return found


def test_layers_import_only_what_they_may():
    problems = []
    for layer, allowed in ALLOWED.items():
        for path in (PACKAGE / layer).rglob("*.py"):
            for line, module in _imports(path):
                if module.startswith(QT) and layer != "ui":
                    problems.append(f"{path.relative_to(PACKAGE)}:{line} imports Qt outside ui")
                if module.startswith("plur_desk."):
                    target = module.split(".")[1]
                    if target in ALLOWED and target not in allowed:
                        problems.append(f"{path.relative_to(PACKAGE)}:{line} {layer} -> {target}")
    assert not problems, "\n".join(problems)


def _code_lines(path: Path) -> int:
    """Lines that carry code: blank lines and the formatter's lone closing brackets do not make a module bigger."""
    return sum(
        1
        for line in path.read_text().splitlines()
        if line.strip() and line.strip() not in {")", "]", "}", "),", "],", "},"}
    )


def test_modules_stay_small():
    big = [f"{p.relative_to(PACKAGE)}: {n} code lines" for p in PACKAGE.rglob("*.py") if (n := _code_lines(p)) > 450]
    assert not big, big


SESSION_PARTS = {"queue", "writes", "undo_history", "verdicts", "snapshot", "history", "signing", "validity"}


def _forwards(method: ast.FunctionDef) -> str | None:
    """`self.part.name(...)` or `self.part.name` when that is all `method` does or returns (its docstring aside)."""
    body = [s for s in method.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return | ast.Expr) or body[0].value is None:
        return None
    value = body[0].value
    target = value.func if isinstance(value, ast.Call) else value
    if (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Attribute)
        and isinstance(target.value.value, ast.Name)
        and target.value.value.id == "self"
        and target.value.attr in SESSION_PARTS
    ):
        return ast.unparse(value)
    return None


def test_the_session_has_no_pass_through_method():
    """Callers reach the session's part they need (`session.queue.rows()`, `session.writes.seen(ids)`, …): a method
    of ReviewSession that only forwards to one of its parts is a second name for the same thing. (What a window
    needs of the store stays on the session: the store is private to the app layer.)"""
    tree = ast.parse((PACKAGE / "app" / "review" / "session.py").read_text())
    session = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ReviewSession")
    forwarding = [
        f"{node.name} -> {found}"
        for node in session.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and (found := _forwards(node))
    ]
    assert not forwarding, forwarding


def test_the_main_window_is_layout_and_wiring():
    """The window lays out and wires; what a change leads to is each view's own (app/broadcast.py), its menus and
    status bar are ui/window_chrome.py's, its action map ui/action_map.py's: 300 lines in all, blank ones too."""
    lines = len((PACKAGE / "ui" / "main_window.py").read_text().splitlines())
    assert lines <= 300, f"ui/main_window.py: {lines} lines"


FOLDER_BUDGET = 15


def test_no_folder_holds_more_than_15_modules():
    """Features as packages (issue #39): a folder over 15 modules is split by feature, and every folder of the
    package is a regular package (an `__init__.py`, so mypy, ruff and the layer walk see it)."""
    folders = [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__")]
    crowded = {}
    for folder in folders:
        count = len([p for p in folder.glob("*.py") if p.name != "__init__.py"])
        if count > FOLDER_BUDGET:
            crowded[str(folder.relative_to(PACKAGE.parent))] = count
    assert not crowded, crowded
    bare = [
        str(f.relative_to(PACKAGE.parent)) for f in folders if any(f.glob("*.py")) and not (f / "__init__.py").is_file()
    ]
    assert not bare, bare


def _graph(folder: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports, for every module under `folder`, by dotted names at any depth:
    every import statement the file holds (top level, inside functions, under TYPE_CHECKING: ast sees them all),
    `from package import module` as an import of the module, and each module's parent packages (whose
    `__init__.py` Python runs first). Not seen: imports by a dotted string (`importlib`, the command table of
    plur_desk/cli.py)."""
    paths = sorted(folder.rglob("*.py"))
    modules = {_name(path) for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in paths:
        name = _name(path)
        parents = {".".join(name.split(".")[:n]) for n in range(1, name.count(".") + 1)}
        targets = {module for _line, module in _imports(path) if module in modules} | (parents & modules)
        graph[name] = targets - {name}
    return graph


def _ui_graph() -> dict[str, set[str]]:
    """The ui modules -> the modules they import."""
    return _graph(PACKAGE / "ui")


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as a path of module names, or [] when the graph is acyclic (depth-first, three colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        state[node] = 2
        stack.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_import_cycle_anywhere():
    """No two modules of plur_desk import each other, however indirectly, not even inside a function or for types
    only: the session imports its parts and nothing imports it back (app/changes/watch.py is given what it reads),
    controllers and panes take their collaborators in the constructor and nothing imports the window back."""
    graph = _graph()
    expected = {
        "plur_desk.ui.main_window",
        "plur_desk.app.review.session",
        "plur_desk.store.plur_store",
        "plur_desk.infra.errors",
    }
    assert expected <= graph.keys()
    # the walk sees a TYPE_CHECKING import and one inside a function
    assert "plur_desk.app.review.session" in graph["plur_desk.app.changes.change_decisions"]
    assert "plur_desk.app.changes.change_decisions" in graph["plur_desk.ui.changes.changes_controller"]
    assert not _cycle(graph), " -> ".join(_cycle(graph))


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_only_the_application_imports_the_main_window():
    importers = sorted(name for name, targets in _ui_graph().items() if "plur_desk.ui.main_window" in targets)
    assert importers == ["plur_desk.ui.app"], importers
    outside = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if PACKAGE / "ui" not in p.parents and any(m == "plur_desk.ui.main_window" for _l, m in _imports(p))
    ]
    assert not outside, outside


def _classes(path: Path) -> dict[str, list[str]]:
    """class name -> the names of its bases, for the classes a module defines at its top level."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return {
        node.name: [ast.unparse(base).split("[")[0].split(".")[-1] for base in node.bases]
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }


def test_controllers_live_apart_from_the_widgets_they_drive():
    """Controllers by composition, each in a module of its own: a module defining a `…Controller` defines no
    widget or dialog (no class on a Qt base other than QObject), and no pane or dialog module imports a controller's
    module (panes show data and emit intent; the controller holding the pane decides)."""
    modules = {_name(path): _classes(path) for path in (PACKAGE / "ui").rglob("*.py")}
    controllers = {name for name, classes in modules.items() if any(c.endswith("Controller") for c in classes)}
    assert {
        "plur_desk.ui.review.review_controller",
        "plur_desk.ui.tensions.tensions_controller",
        "plur_desk.ui.validity.validity_controller",
        "plur_desk.ui.team.team_controller",
    } <= controllers
    mixed = [
        f"{name}: {cls}"
        for name in sorted(controllers)
        for cls, bases in modules[name].items()
        if any(b.startswith("Q") and b != "QObject" for b in bases)
    ]
    assert not mixed, mixed
    graph = _ui_graph()
    views = [name for name in graph if name.endswith(("_pane", "_dialog"))]
    back = [f"{name} imports {sorted(graph[name] & controllers)}" for name in views if graph[name] & controllers]
    assert not back, back


def test_ui_reads_no_global_folder_outside_its_assembly():
    """Where derived data goes is decided where the window is assembled (ui/app.py, MainWindow) and handed to the
    controllers through the Workspace; no pane or controller reads the platform's folders itself."""
    found = []
    for path in (PACKAGE / "ui").rglob("*.py"):
        if _name(path) in {"plur_desk.ui.app", "plur_desk.ui.main_window"}:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            called = node.func if isinstance(node, ast.Call) else None
            name = getattr(called, "id", None) or getattr(called, "attr", None)
            if name in {"cache_dir", "data_dir", "config_dir"}:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {name}()")
    assert not found, found


# The store is private to the app layer: the window asks the session (save_cache, lock_holder, changed_on_disk, …)
# and never reaches through it to store objects, whose writes would escape the journal, the Seen checks and audit.
STORE_ATTRIBUTES = {"store", "journal", "entries"}
STORE_TYPES = {"PlurStore", "ListFile", "Entry", "Edit", "WriteResult", "HistoryLog", "Journal", "JournalRecord"}


def test_ui_never_touches_the_store_through_the_session():
    problems = []
    for path in (PACKAGE / "ui").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute) and node.attr in STORE_ATTRIBUTES:
                problems.append(f"{where} .{node.attr}")
            elif isinstance(node, ast.Name) and node.id in STORE_TYPES:
                problems.append(f"{where} {node.id}")
            elif isinstance(node, ast.Attribute) and node.attr in STORE_TYPES:
                problems.append(f"{where} .{node.attr}")
    assert not problems, "\n".join(problems)


def _session_named(node: ast.expr) -> bool:
    """`session`, `self.session`, `win.session`, `reopened_session`, …: an expression naming a session."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "session" in name.lower()


def test_only_the_session_reaches_its_store():
    """The store is private to the session: search, loading, scale and team review ask the session (root,
    snapshot.digests, parse_rest, finish_load, fully_loaded) instead of reaching `session.store`, whose snapshot
    and writes are the session's own (its parts get the store in their constructors)."""
    problems = []
    for path in PACKAGE.rglob("*.py"):
        if _name(path) == "plur_desk.app.review.session":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Attribute) and node.attr == "store" and _session_named(node.value):
                problems.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {ast.unparse(node)}")
    assert not problems, "\n".join(problems)


# In ui/review/detail.py `.get(` reads only a history event's parts and the review record, never the engram itself.
DETAIL_GET_RECEIVERS = {"event", "data", "actor", "review_record"}


def test_ui_reads_engram_fields_through_engram_view():
    """ui/ reads an engram's fields through EngramView (domain/engram_view.py: statement, scope, window, superseded,
    …), where each rule is written once, never with `.get(` on the record."""
    problems = []
    for path in (PACKAGE / "ui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"):
                continue
            receiver = ast.unparse(node.func.value)
            where = f"{path.relative_to(PACKAGE)}:{node.lineno} {receiver}.get(…)"
            if (
                "engram" in receiver.lower()
                or receiver in {"record", "other"}
                or (_name(path) == "plur_desk.ui.review.detail" and receiver not in DETAIL_GET_RECEIVERS)
            ):
                problems.append(where)
    assert not problems, "\n".join(problems)


def test_one_assembly_path():
    """A session is built in app/review/bootstrap.py only (the window's load worker, the terminal commands and the shared
    test fixtures all call open_session); `plur-desk check` alone opens a store without a session, to inspect it."""
    built = {"ReviewSession": [], "PlurStore": []}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in built:
                built[node.func.id].append(_name(path))
    assert set(built["ReviewSession"]) == {"plur_desk.app.review.bootstrap"}, built
    assert set(built["PlurStore"]) == {"plur_desk.app.review.bootstrap", "plur_desk.app.check"}, built


def test_the_session_is_composed_without_an_import_cycle():
    """No app module imports the session back (the mixins that did are gone); the session's parts stand alone."""
    parts = (
        "plur_desk.app.review.snapshot",
        "plur_desk.app.review.writes",
        "plur_desk.app.review.undo",
        "plur_desk.app.trust.session_signing",
        "plur_desk.app.history.history_index",
        "plur_desk.app.review.rows",
    )
    cyclic = [
        f"{name}:{line}"
        for name in parts
        for line, module in _imports(_path(name))
        if module == "plur_desk.app.review.session"
    ]
    assert not cyclic, cyclic


def test_tests_mirror_the_package():
    """tests/unit has one folder per Qt-free layer, tests/ui the Qt layer, tests/integration the real PLUR."""
    tests = PACKAGE.parent / "tests"
    unit = {p.name for p in (tests / "unit").iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert unit == set(ALLOWED) - {"ui"}, unit
    assert not list((tests / "unit").glob("test_*.py"))  # every unit test belongs to a layer
    assert (tests / "ui").is_dir() and (tests / "integration").is_dir()


def test_the_house_lint_and_type_checks_stay_on():
    """ruff with the house rule set (complexity 12) and mypy strict over the whole package, no module excused."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    lint = config["tool"]["ruff"]["lint"]
    assert {"E", "F", "W", "I", "B", "UP", "TID", "C90", "SIM", "RUF", "PT", "RET", "T20"} <= set(lint["select"])
    assert lint["mccabe"]["max-complexity"] <= 12
    mypy = config["tool"]["mypy"]
    assert mypy["strict"] is True and mypy["files"] == ["plur_desk"]
    excused = [o for o in mypy.get("overrides", []) if any(m.startswith("plur_desk") for m in o["module"])]
    assert not excused, excused


def test_what_was_written_is_said_in_one_place():
    """#39: outcomes travel as values (`Outcome`); the words "nothing was written" are spelled once, in
    infra/errors.py, and no code takes them apart again."""
    spelled = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if "nothing was written" in text.lower() and id(node) not in docstrings:
                spelled.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert len(spelled) == 1 and spelled[0].startswith("plur_desk/infra/errors.py:"), spelled


def test_one_pane_style():
    """Every pane lays out its list over its detail with ui/common/widgets.list_and_detail (one splitter, one set of
    margins): no other module builds a QSplitter by hand."""
    built = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in (PACKAGE / "ui").rglob("*.py")
        if _name(path) not in {"plur_desk.ui.common.widgets"}
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "QSplitter"
    )
    assert not built, built


def test_the_store_argument_is_declared_once():
    """Every terminal command finds its store by PLUR's rule through infra/paths.store_parser (or STORE_HELP): the
    rule's words are spelled once."""
    spelled = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "default: $PLUR_PATH" in node.value
    )
    assert len(spelled) == 1 and spelled[0].startswith("infra/paths.py:"), spelled
