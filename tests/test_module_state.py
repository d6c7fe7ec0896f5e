"""No module of plur_desk keeps state of its own: no `global` statement, and no module-level container or
per-process object (a lock, a thread-local, a counter) that the code changes. State lives in objects someone holds
(the window's `Jobs` and its `Pacing`, a session, a store), reached explicitly or through the one job context
(infra/jobs.py). Checked on the source with ast."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "plur_desk"

# Calls whose result is mutable; a module-level name bound to one is state once the code changes it.
CONTAINERS = {"list", "dict", "set", "bytearray", "deque", "defaultdict", "OrderedDict", "Counter", "ChainMap"}
CONTAINERS |= {"WeakValueDictionary", "WeakKeyDictionary", "WeakSet", "array"}
# Objects that exist only to hold state between calls: at module level they are state whatever the code does.
HOLDERS = {"local", "Lock", "RLock", "Condition", "Event", "Semaphore", "BoundedSemaphore", "count", "Queue"}
MUTATORS = {"append", "appendleft", "extend", "extendleft", "insert", "remove", "pop", "popleft", "popitem", "clear"}
MUTATORS |= {"update", "setdefault", "add", "discard", "sort", "reverse", "move_to_end", "rotate", "__setitem__"}
MUTATORS |= {"difference_update", "intersection_update", "symmetric_difference_update", "frombytes", "fromlist"}

# Module state still left, outside background work: each names the module and the name, and why it is still there.
# The list only shrinks: an entry that is no longer found fails the test as well (take it off).
LEFT = {
    ("app/team/team_review.py", "_REMOTES"): "a per-process memo of each store's git remote type",
    ("index/embeddings.py", "_CHUNKS"): "a per-process memo of tokenised text",
    ("index/embeddings.py", "_SHARED"): "the process's one ONNX session per model file (~80 MB each)",
    ("index/embeddings.py", "_SHARED_LOCK"): "guards _SHARED",
    ("infra/crash.py", "_passed"): "the crash points a test asks for by environment (tests/support/crash_driver.py)",
    ("store/atomic.py", "_counter"): "unique temporary names within the process",
    ("store/journal.py", "_counter"): "unique record names within the process",
    ("store/locking/lock.py", "_counter"): "unique lock tokens within the process (PLUR's token format)",
    (
        "store/locking/lock.py",
        "_held",
    ): "the tokens of the locks this process holds (never taken over as a dead holder's)",
    ("store/lists/yaml_load.py", "_KNOWN_LINES"): "a per-process memo of parsed YAML lines",
    ("ui/common/theme.py", "_active"): "the application's colour scheme (one QApplication per process)",
    ("ui/common/theme.py", "_listeners"): "told after each change of the application's palette",
    ("ui/common/theme.py", "_following"): "whether the desktop's scheme is followed yet",
}


def _called(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return ""


def _mutable(value: ast.expr) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    return _called(value) in CONTAINERS | HOLDERS


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """The statements run at import, including those inside module-level if/try/with blocks."""
    found: list[ast.stmt] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, block, []):
                    todo.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
    return found


def _state(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level names bound to a mutable value, with that value."""
    bound: dict[str, ast.expr] = {}
    for node in _module_level(tree):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and _mutable(value):
                bound[target.id] = value
    return bound


def _base(node: ast.expr) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def problems_in(source: str, where: str) -> list[tuple[str, str, int]]:
    """(module, what, line) for each `global` and each module-level name holding state."""
    tree = ast.parse(source)
    state = _state(tree)
    found = [(where, "global", node.lineno) for node in ast.walk(tree) if isinstance(node, ast.Global)]
    found += [(where, name, value.lineno) for name, value in state.items() if _called(value) in HOLDERS]
    for node in ast.walk(tree):
        changed: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            changed = [t for t in targets if isinstance(t, (ast.Subscript, ast.Attribute))]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            changed = [node.func.value]
        found += [(where, _base(t), node.lineno) for t in changed if _base(t) in state]
    return found


def test_no_module_of_plur_desk_keeps_state_of_its_own():
    found: list[tuple[str, str, int]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += problems_in(path.read_text(), path.relative_to(PACKAGE).as_posix())
    new = [f"{where}:{line}: {what}" for where, what, line in found if (where, what) not in LEFT]
    assert not new, "module state (a `global`, or a module-level name the code changes):\n" + "\n".join(new)
    gone = set(LEFT) - {(where, what) for where, what, _line in found}
    assert not gone, f"no longer module state: take these off LEFT: {sorted(gone)}"


def test_the_check_finds_each_kind_of_module_state():
    """The check is real: each way a module could keep state is found (and a constant table is not)."""
    cases = {
        "count = 0\ndef bump():\n    global count\n    count += 1\n": 1,
        "SEEN = {}\ndef see(k):\n    SEEN[k] = True\n": 1,
        "SEEN: list[str] = []\ndef see(k):\n    SEEN.append(k)\n": 1,
        "import threading\n_mine = threading.local()\n": 1,
        "import threading\n_lock = threading.Lock()\n": 1,
        "from collections import deque\nQ = deque()\ndef f():\n    Q.popleft()\n": 1,
        "CACHE = dict()\ndef drop(k):\n    del CACHE[k]\n": 1,
        "if True:\n    LATER = []\ndef f():\n    LATER.extend([1])\n": 1,
        "TABLE = {'a': 1}\ndef f(k):\n    return TABLE[k]\n": 0,
        "NAMES = ['a']\ndef f():\n    names = list(NAMES)\n    names.append('b')\n    return names\n": 0,
    }
    for source, expected in cases.items():
        assert len(problems_in(source, "case")) == expected, source
