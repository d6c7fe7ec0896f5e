"""plur_desk.store layer (see docs/architecture.md)."""
