"""plur_desk.app layer (see docs/architecture.md)."""
