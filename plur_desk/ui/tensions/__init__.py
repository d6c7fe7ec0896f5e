"""The Tensions pane, the Conflicts view and the contradiction check before an approval."""
