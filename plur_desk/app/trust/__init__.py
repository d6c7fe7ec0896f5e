"""Keys and trust: the reviewer's signing key, the keys this user trusts, `plur-desk trust`."""
