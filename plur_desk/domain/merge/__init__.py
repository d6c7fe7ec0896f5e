"""The symmetric three-way merge of PLUR records, and settling a team disagreement."""
