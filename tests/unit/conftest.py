"""Fixtures every unit test may use (a module with a store of its own defines its own `session`)."""

from __future__ import annotations

import pytest

from plur_desk.app.review.session import ReviewSession

from support.sessions import small_session


@pytest.fixture
def session(tmp_path) -> ReviewSession:
    """The small shared store (support/sessions.py), opened through app/bootstrap like the window's."""
    return small_session(tmp_path)
