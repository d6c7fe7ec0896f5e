"""content_hash and summary equal PLUR 0.20's own computeContentHash and autoSummary on random statements."""

from __future__ import annotations

import random
import unicodedata

from plur_desk.domain.plur_rules.derived import (
    _case_ignorable,
    _cased,
    _is_word,
    content_hash,
    generate_summary,
    js_lower,
)
from plur_desk.domain.plur_rules.unicode_newer import NEWER_LOWER, NEWER_WORD_RANGES
from plur_desk.domain.review import Reviewer, edit_statement

from support.node import run_node

# Whitespace JavaScript and Python disagree about, and look-alikes of neither kind.
SPACES = ["\t", "\n", "\v", "\f", "\r", "\u00a0", "\u1680", "\u2000", "\u2007", "\u200a", "\u2028", "\u2029",
          "\u202f", "\u205f", "\u3000", "\ufeff", "\x1c", "\x1f", "\x85", "\u180e", "\u200b", "  ", " "]  # fmt: skip
ASTRAL = ["🚀", "𝒜", "𐐀", "𐐨", "𠀀", "𝟘", "👩‍💻", "𓀀", "🇺🇳"]
MARKS = ["\u0301", "\u0308", "\u0327", "\u20dd", "\u0e31"]
SPECIAL = ["İ", "ß", "ﬁ", "Σ", "ΑΣ ", "ǅ", "Ⅻ", "½", "²", "_", "...", "!", "?", ". ", "! ", "?\u00a0", ".\ufeff", "<b>"]
WORDS = ["the", "build", "uses", "Node", "tabs", "never", "Ünïcödé", "日本語", "CI", "x" * 25, "a", "é"]


def _assigned(rng: random.Random, lo: int, hi: int) -> str:
    """A random code point, not a surrogate (assigned or not, in Python's Unicode tables or only in newer ones)."""
    while True:
        ch = chr(rng.randint(lo, hi))
        if unicodedata.category(ch) != "Cs":
            return ch


def _piece(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.35:
        return rng.choice(WORDS)
    if roll < 0.55:
        return rng.choice(SPACES)
    if roll < 0.65:
        return rng.choice(ASTRAL)
    if roll < 0.72:
        return rng.choice(MARKS)
    if roll < 0.82:
        return rng.choice(SPECIAL)
    if roll < 0.90:
        return _assigned(rng, 0x20, 0xFFFD)
    if roll < 0.95:
        return _assigned(rng, 0x10000, 0x3FFFF)
    return chr(rng.choice(NEWER))  # assigned after Python's Unicode 14: only JavaScript's tables know them


NEWER = [lo for lo, _hi in NEWER_WORD_RANGES] + list(NEWER_LOWER)


def _statement(rng: random.Random) -> str:
    target = rng.choice([20, 58, 61, 120, 199, 200, 201, 202, 230, 400])
    parts: list[str] = []
    while sum(len(p) for p in parts) < target:
        parts.append(_piece(rng))
    text = "".join(parts)
    return text[: target + rng.randint(-3, 3)] if rng.random() < 0.5 else text


def test_random_statements_hash_and_summarise_as_plur_does():
    rng = random.Random(20261202)
    statements = [_statement(rng) for _ in range(4000)]
    statements += [
        "a" * 58 + "🚀" + "b" * 200,  # the 60-unit cut falls inside the astral character
        "a" * 59 + "🚀" + "b" * 200,
        "𝒜" * 101,  # 101 code points, 202 UTF-16 units: PLUR summarises it
        "x" * 199 + "🚀",
        "word " * 7 + "\ufeff" + "y" * 200,
        "First sentence.\u2028Then " + "z" * 220,
        "\ufeffLeading BOM and NBSP\u00a0inside",
    ]
    theirs = run_node("derived_oracle.mjs", payload=statements)
    assert isinstance(theirs, list)
    diffs = [
        (s, ours, tuple(t))
        for s, t in zip(statements, theirs, strict=True)
        if (ours := (content_hash(s), generate_summary(s))) != tuple(t)
    ]
    assert not diffs, f"{len(diffs)} of {len(statements)} differ, first: {diffs[:3]!r}"


def test_edit_keeps_what_the_reviewer_typed_and_plur_agrees_on_the_hash():
    from datetime import UTC, datetime

    typed = "Use\ttabs  in Makefiles,\u00a0always\ufeff"
    engram: dict[str, object] = {"id": "ENG-2026-12-02-001", "statement": "old"}
    edited, _events = edit_statement(engram, typed, Reviewer("Ada"), datetime(2026, 12, 2, tzinfo=UTC))
    assert edited["statement"] == "Use\ttabs  in Makefiles,\u00a0always"  # only surrounding whitespace trimmed
    theirs = run_node("derived_oracle.mjs", payload=[edited["statement"]])
    assert isinstance(theirs, list)
    assert [edited["content_hash"], edited.get("summary")] == theirs[0]


def test_every_code_point_is_classified_and_lowercased_as_in_javascript():
    """An exhaustive sweep, so no character (say, one newer than Python's Unicode tables) hashes differently."""
    theirs = run_node("unicode_sweep.mjs")
    assert isinstance(theirs, dict)
    word, cased, ignorable = set(theirs["word"]), set(theirs["cased"]), set(theirs["ignorable"])
    lower = {int(k): v for k, v in theirs["lower"].items()}
    wrong: dict[str, list[str]] = {"word": [], "cased": [], "case_ignorable": [], "lower": []}
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        for name, ours, js in (
            ("word", _is_word(ch), cp in word),
            ("cased", _cased(ch), cp in cased),
            ("case_ignorable", _case_ignorable(ch), cp in ignorable),
            ("lower", js_lower(ch), lower.get(cp, ch)),
        ):
            if ours != js:
                wrong[name].append(hex(cp))
    assert not any(wrong.values()), {k: (len(v), v[:8]) for k, v in wrong.items() if v}


def test_an_edit_in_the_window_is_stored_as_typed_and_plur_reads_a_fresh_hash(qtbot, tmp_path, node_home):
    """Through the real window: tabs, double spaces and U+FEFF survive the edit, and PLUR's doctor finds the
    content_hash and summary it would compute itself."""
    import shutil

    from PySide6.QtCore import Qt

    from plur_desk.app.demo import demo_source

    from support.node import plur_env

    store = tmp_path / "store"
    shutil.copytree(demo_source(), store)
    window = _open_window(qtbot, store, tmp_path)
    target = window.drafts.current_id()
    typed = "Use\ttabs  in Makefiles,\ufeff always; " + "𝒜" * 60 + " and then " + "long words " * 10
    window.review.edit_selected()
    window.drafts.editor.setPlainText(typed)
    with qtbot.waitSignal(window.changes_applied, timeout=10000):
        qtbot.keyClick(window.drafts.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    theirs = run_node("plur_ops.mjs", payload=[{"op": "load"}], env=plur_env(store, node_home))
    assert isinstance(theirs, list)
    stored = theirs[0]["engrams"][target]
    assert stored["statement"] == typed.strip()
    expected = run_node("derived_oracle.mjs", payload=[stored["statement"]])
    assert [stored["content_hash"], stored.get("summary")] == expected[0]  # type: ignore[index]
    assert stored.get("summary")  # over 200 UTF-16 units, so PLUR expects one


def _open_window(qtbot, store, tmp_path):
    from datetime import UTC, datetime

    from plur_desk.app.settings import Settings, SettingsStore
    from plur_desk.infra.clock import FixedClock
    from plur_desk.ui.app import make_application
    from plur_desk.ui.main_window import MainWindow

    make_application()
    settings = Settings(reviewer_name="Grace Tester")
    clock = FixedClock(datetime(2026, 12, 2, 15, 0, tzinfo=UTC))
    window = MainWindow(SettingsStore(tmp_path / "settings.yaml"), settings, "Grace Tester", clock)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.store_opened, timeout=60000):  # the whole store, not just the drafts
        window.open_path(store)
    qtbot.waitUntil(lambda: window.session is not None and window.jobs.pending("session") == 0, timeout=20000)
    return window
