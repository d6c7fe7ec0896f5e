"""Agent changes: what differs from the watched baseline that no human decision explains."""
