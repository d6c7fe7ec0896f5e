"""Reviewing one open store: the session, its snapshot, writes, undo, queues and rows."""
