"""The Validity pane, its timeline, date fields and controller."""
