"""Review at scale in the window: risk order, the Clusters and Writers panes."""
