"""Review at scale: the risk order, the writer ledger and near-duplicate clusters."""
