"""AppBench metrics: reading answers, the strict and paper profiles, error analysis and plan-graph
metrics."""
