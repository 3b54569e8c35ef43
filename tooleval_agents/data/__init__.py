"""Benchmark data: where it lives, how it is fetched and checked, read, pushed to LangSmith, and
answers produced elsewhere."""
