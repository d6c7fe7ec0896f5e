"""Team sync on disk: the three-way file merge, sync's scope strip, the team ledger."""
