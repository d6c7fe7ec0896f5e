"""plur_desk.domain layer (see docs/architecture.md)."""
