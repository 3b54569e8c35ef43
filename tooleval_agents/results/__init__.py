"""What a run leaves and what is computed from it: the run directory and its files, corpus sums,
intervals, costs, comparison, reports and re-scoring."""
