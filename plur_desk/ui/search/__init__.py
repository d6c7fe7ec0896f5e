"""Search in the window."""
