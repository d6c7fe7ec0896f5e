"""Contradictions found locally, and the reviewer's answers to each candidate."""
