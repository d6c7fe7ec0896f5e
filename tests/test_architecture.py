"""The layer rule (HOUSE-STYLE.md §1) and a module-size budget, checked on the source with ast."""

from __future__ import annotations

import ast
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


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import"
            found.append((node.lineno, node.module or ""))
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
