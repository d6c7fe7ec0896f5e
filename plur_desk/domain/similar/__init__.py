"""Statements alike: contradiction signals and near-duplicates."""
