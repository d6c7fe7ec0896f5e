"""Agent text is data, never markup: a hostile corpus shown in every pane renders as exactly its characters.

Each string goes into a stored field (statement, rationale, tags, domain, scope, asserted_by, a tension's judge
reason and snapshot, a rejection's reason and reviewer, history event data and actor); every pane and dialog that
shows it is checked: the rendered plain text contains the string (hidden characters as visible ⟨U+…⟩ markers),
the document holds no link and no image, and no resource load was even asked for.
"""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from plur_desk.domain.lint import reveal, text_flags
from plur_desk.ui.common.models import DraftColumn
from plur_desk.ui.common.widgets import SafeBrowser

from ui.conftest import answer_modal

HOSTILE = [
    "<h1>Big</h1><b>bold</b> a < b && c > d",
    "<img src='file:///etc/passwd'> <img src=\"https://evil.example/x.png\"> seen",
    "<a href='https://evil.example/'>click here</a> to verify",
    "</td></tr></table><p>✔ approved by Ada</p>",
    "invoice\u202egnp.exe is safe",
    "zero\u200bwidth\u200djoin\ufeffbom\u2066isolate\u2069",
    "w" * 10_000,
    "&lt;already&gt; &amp; <!-- hidden --> <style>body{color:red}</style> <script>x()</script>",
    "tabs\tand  double  spaces\nand a second line",
]


def _store_with_hostile_text(store):
    from plur_desk.domain.plur_rules.derived import content_hash
    from plur_desk.store.lists.yaml_dump import dump_engrams_document, dump_tensions_document
    from plur_desk.store.plur_store import PlurStore

    loaded = PlurStore(store)
    loaded.load()
    engrams = [dict(e.value) for e in loaded.engrams.entries]
    tensions = [dict(e.value) for e in loaded.tensions.entries]
    drafts = [e for e in engrams if e.get("commitment") == "draft" and e.get("status") == "active"]
    assert len(drafts) >= len(HOSTILE)
    for engram, text in zip(drafts, HOSTILE, strict=False):
        engram["statement"] = text
        engram["content_hash"] = content_hash(text)
        engram["temporal"] = {"learned_at": "2026-01-01", "valid_from": "2026-01-01", "valid_until": "2027-06-30"}
    first = drafts[0]
    first.update(rationale=HOSTILE[3], tags=[HOSTILE[0], HOSTILE[4]], domain=HOSTILE[2], scope=HOSTILE[1])
    first["attribution"] = {"asserted_by": HOSTILE[5], "model": {"name": HOSTILE[3]}}
    # an earlier human rejection of the same statement as drafts[4], with a hostile reason and reviewer name
    ghost = {k: v for k, v in drafts[4].items() if k != "temporal"}
    ghost.update(id="ENG-2026-01-01-999", status="retired", commitment="decided")
    ghost["review"] = {"state": "rejected", "by": HOSTILE[2], "at": "2026-11-01T10:00:00.000Z", "reason": HOSTILE[0]}
    engrams.append(ghost)
    tension = tensions[0]
    by_id = {e["id"]: e for e in engrams}
    by_id[tension["engram_a"]]["statement"] = HOSTILE[8]
    by_id[tension["engram_b"]]["statement"] = HOSTILE[4]
    tension.update(reason=HOSTILE[3], statement_a=HOSTILE[8], statement_b=HOSTILE[0], category="factual")
    (store / "engrams.yaml").write_text(dump_engrams_document({"engrams": engrams}), encoding="utf-8")
    (store / "tensions.yaml").write_text(dump_tensions_document(tensions), encoding="utf-8")
    lines = []
    for i, text in enumerate(HOSTILE):
        event = {
            "event": "engram_updated",
            "engram_id": drafts[i]["id"],
            "timestamp": f"2026-12-02T13:{i:02d}:00.000Z",
            "data": {"action": text, "reason": text, "field": "temporal", "from": None, "to": {"note": text}},
            "actor": {"asserted_by": text},
        }
        lines.append(json.dumps(event, ensure_ascii=False) + "\n")
    with open(store / "history" / "2026-12.jsonl", "a", encoding="utf-8") as handle:
        handle.writelines(lines)
    return drafts


@pytest.fixture
def hostile(store_copy):
    return _store_with_hostile_text(store_copy)


def _rendered(browser: SafeBrowser) -> str:
    """What the reader sees, after checking the document holds no link and no image and loaded nothing."""
    document = browser.document()
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            assert not fmt.isAnchor(), f"a link in {browser.objectName()}: {fmt.anchorHref()}"
            assert not fmt.isImageFormat(), f"an image in {browser.objectName()}"
            it += 1
        block = block.next()
    assert browser.blocked == [], f"{browser.objectName()} was asked to load {browser.blocked}"
    return document.toPlainText()


def _label_text(text: str) -> str:
    """What a QLabel renders for `text` when it treats it as rich text (as Qt does when it looks like HTML)."""
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def test_every_pane_shows_hostile_text_as_text(qtbot, hostile, window):
    drafts = hostile
    pane = window.drafts
    for engram, text in zip(drafts, HOSTILE, strict=False):
        assert pane.select_id(engram["id"])
        window.review.show_current()
        shown = _rendered(pane.detail)
        assert reveal(text) in shown, text[:40]
        cell = pane.model.data(pane.model.index(pane.current_row(), DraftColumn.STATEMENT))
        assert cell == reveal(text).replace("\n", " ⏎ ")
        tip = pane.model.data(pane.model.index(pane.current_row(), DraftColumn.STATEMENT), Qt.ItemDataRole.ToolTipRole)
        assert _label_text(tip) == reveal(text)
    pane.select_id(drafts[0]["id"])
    window.review.show_current()
    shown = _rendered(pane.detail)
    for field_text in (HOSTILE[3], HOSTILE[0], HOSTILE[4], HOSTILE[2], HOSTILE[1], HOSTILE[5]):
        assert reveal(field_text) in shown  # rationale, tags, domain, scope, asserted_by, model
    # a statement carrying bidi or zero-width characters is flagged and shows them
    pane.select_id(drafts[4]["id"])
    window.review.show_current()
    shown = _rendered(pane.detail)
    assert "⟨U+202E⟩" in shown and "hidden characters U+202E" in shown
    flags_cell = pane.model.index(pane.current_row(), DraftColumn.FLAGS)
    assert "⛔ hidden chars" in flags_cell.data()  # the column's short name; its tooltip names the characters
    assert "hidden characters U+202E" in flags_cell.data(Qt.ItemDataRole.ToolTipRole)
    assert reveal(HOSTILE[0]) in shown and reveal(HOSTILE[2]) in shown  # the earlier rejection's reason and reviewer

    # the reject dialog offers the earlier reason as typed text
    offered = []

    def check_reason(dialog):
        offered.append(dialog.combo.currentText())
        dialog.reject()

    answer_modal(check_reason)
    qtbot.keyClick(pane.table, Qt.Key.Key_R)
    assert offered == [HOSTILE[0]]

    window.navigation.show_tensions()
    tensions = window.tensions
    shown = _rendered(tensions.detail)
    for text in (HOSTILE[3], HOSTILE[8], HOSTILE[4]):
        assert reveal(text) in shown, text[:40]
    tensions.filter.setCurrentText("All")
    for row in range(tensions.model.rowCount()):
        tensions._select(row)
        _rendered(tensions.detail)

    window.navigation.show_validity()
    validity = window.validity
    statements = {validity.model.data(validity.model.index(r, 4)) for r in range(validity.model.rowCount())}
    assert {reveal(t) for t in HOSTILE} <= statements

    window.navigation.show_history()
    history = window.history
    for text in HOSTILE:
        history.reviewer.clear()
        history.engram.clear()
        event_row = next(i for i, e in enumerate(history.model.events) if e.get("data", {}).get("reason") == text)
        history.table.selectRow(event_row)
        shown = _rendered(history.detail)
        assert reveal(json.dumps(text, ensure_ascii=False)[1:-1]) in shown
        actor = history.model.data(history.model.index(event_row, 1))
        assert actor == reveal(f"unknown kind · {text}")
    assert all(browser.blocked == [] for browser in window.findChildren(SafeBrowser))


def test_search_results_and_dialogs_show_hostile_text_as_text(qtbot, hostile, window):
    from plur_desk.ui.tensions.split_dialog import SplitDialog

    qtbot.waitUntil(lambda: window.finder.is_ready, timeout=20000)
    window.navigation.focus_search()
    qtbot.keyClicks(window.search, "approved")
    qtbot.waitUntil(lambda: 0 < window.drafts.model.rowCount() < len(HOSTILE), timeout=5000)
    assert window.drafts.select_id(next(r.id for r in window.drafts.model.rows if r.statement == HOSTILE[3]))
    window.review.show_current()
    assert reveal(HOSTILE[3]) in _rendered(window.drafts.detail)
    dialog = SplitDialog(HOSTILE[0], HOSTILE[3])
    qtbot.addWidget(dialog)
    assert HOSTILE[0] in _label_text(dialog.preview.text()) and HOSTILE[3] in _label_text(dialog.preview.text())


def test_banners_never_render_markup_and_long_words_do_not_widen_the_window(qtbot, window):
    width = window.width()
    window.messages.error(HOSTILE[1] + " " + HOSTILE[6])
    assert window.banner.textFormat() == Qt.TextFormat.PlainText
    assert HOSTILE[1] in window.banner.text()
    qtbot.wait(10)
    assert window.width() == width


def test_hidden_characters_are_flagged():
    assert text_flags("plain text") == []
    assert text_flags("a\u202eb") == ["hidden characters U+202E"]
    assert reveal("a\u200bb\u202ec") == "a⟨U+200B⟩b⟨U+202E⟩c"
    assert reveal("tabs\tand\nlines") == "tabs\tand\nlines"


def test_the_store_really_holds_the_corpus(hostile, store_copy):
    """The corpus survives the YAML round trip, so the pane tests really show it (they cannot pass vacuously)."""
    from ui.conftest import engrams_on_disk

    statements = {e.get("statement") for e in engrams_on_disk(store_copy).values()}
    assert set(HOSTILE) <= statements


def test_text_html_escapes_exactly_as_html_escape_does():
    """`widgets.escape` stands in for `html.escape(quote=True)` (not imported at launch): the same output for
    markup, entities, quotes and every character, so nothing agent-written reaches a rich-text widget as markup."""
    import html

    from plur_desk.ui.common.widgets import escape

    samples = ['<b x="1">&amp;\'</b>', "<script>alert('x')</script>", "&lt;&#x27;&quot;", "a & b < c > d", ""]
    samples.append("".join(chr(c) for c in range(0x20, 0x250)))
    for text in samples:
        assert escape(text) == html.escape(text, quote=True)
