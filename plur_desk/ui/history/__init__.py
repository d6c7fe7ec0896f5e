"""The History pane and its export."""
