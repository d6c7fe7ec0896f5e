"""keys.yaml, Ed25519 signatures over events, and endorsements of keys."""
