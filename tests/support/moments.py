"""The moments the tests' fixed clocks read. Expected ages, windows and "expired" states follow from these, so they
live in one place. Three tests pin a moment of their own beside the exact output they assert (a domain rule's
timestamp or id: test_commands, test_tension_rules, conflict_eval)."""

from __future__ import annotations

from datetime import UTC, datetime

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
"""The small store's session (`support.sessions`) and the app, index and domain unit tests."""

WINDOW_NOW = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)
"""The window on the demo store (`tests/ui/conftest.py`) and the tests that read its drafts' ages: three hours
after NOW, when the newest demo drafts are a few hours old."""
