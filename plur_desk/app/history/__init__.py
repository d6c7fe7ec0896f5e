"""The history index: every history line of a store, found without scanning them all."""
