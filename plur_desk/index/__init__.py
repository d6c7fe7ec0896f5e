"""plur_desk.index layer (see docs/architecture.md)."""
