"""plur_desk.infra layer (see docs/architecture.md)."""
