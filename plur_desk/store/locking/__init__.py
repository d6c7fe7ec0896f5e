"""PLUR's lock-file protocol: taking, keeping and taking over a lock."""
