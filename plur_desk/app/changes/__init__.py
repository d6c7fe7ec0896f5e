"""Agent changes since the watched baseline, and `plur-desk changes`."""
