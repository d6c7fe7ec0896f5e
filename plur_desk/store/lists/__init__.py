"""PLUR's list files (engrams.yaml, tensions.yaml) as byte blocks, read and written as js-yaml."""
