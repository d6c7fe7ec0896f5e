"""The Changes pane and its controller: agent changes since the watched baseline."""
