"""Search over one open store: full text, embeddings, and `plur-desk search`."""
