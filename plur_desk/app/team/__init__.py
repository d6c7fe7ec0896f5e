"""Team review: disagreements between reviewers, git sync and the merge driver."""
