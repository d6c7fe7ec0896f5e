"""What every pane shares: widgets, icons, theme, table models, small dialogs, the runner."""
