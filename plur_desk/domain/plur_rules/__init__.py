"""PLUR's own rules mirrored exactly: schemas, derived fields, validity, tensions, ids."""
