"""PLUR's history log (history/YYYY-MM.jsonl), its hash chain and checkpoints."""
