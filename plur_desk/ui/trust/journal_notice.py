"""The notice under the banner naming write-ahead journal records no trusted key verifies, and the button that
moves them aside (never deletes them): such a record is never applied, whoever wrote it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QLabel, QPushButton, QWidget

from plur_desk.infra.errors import PlurDeskError
from plur_desk.ui.common.widgets import shorten_long_words
from plur_desk.ui.workspace import Workspace


class JournalNotice(QWidget):
    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.setObjectName("journalNotice")
        self._build()
        self._connect()
        self.hide()
        banner = workspace.messages.banner  # placed right under it, in the banner's own layout
        holder = banner.parentWidget()
        layout = holder.layout() if holder is not None else None
        if isinstance(layout, QBoxLayout):
            layout.insertWidget(layout.indexOf(banner) + 1, self)

    def _build(self) -> None:
        self.label = QLabel(self)
        self.label.setObjectName("journalNoticeText")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # file names are data, never markup
        self.discard = QPushButton("Move aside (not applied)", self)
        self.discard.setObjectName("discardJournalRecords")
        self.discard.setToolTip("Moves the records to .plur-desk/journal-discarded/; nothing of them is applied")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.discard)

    def _connect(self) -> None:
        self.discard.clicked.connect(self.discard_all)

    def refresh(self) -> None:
        """Shown while the open session has unverifiable records."""
        session = self.workspace.session
        names = list(session.unverified_records) if session is not None else []
        if not names:
            self.hide()
            return
        self.label.setText(
            shorten_long_words(
                f"Not applied: {len(names)} write-ahead journal record(s) that no key you trust verifies "
                f"({', '.join(names[:3])}{' …' if len(names) > 3 else ''}). Anyone who can write the store folder "
                "could have written them."
            )
        )
        self.show()

    def discard_all(self) -> None:
        session = self.workspace.session
        if session is None:
            return
        said = []
        for name in list(session.unverified_records):
            try:
                said.append(session.discard_journal_record(name))
            except PlurDeskError as exc:
                said.append(str(exc))
        self.workspace.messages.show("\n".join(said))
        self.refresh()
