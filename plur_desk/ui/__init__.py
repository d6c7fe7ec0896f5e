"""plur_desk.ui layer (see docs/architecture.md)."""
