"""UltraTool metrics: key-value metrics, planning structure, plan-create-use, corpus scoring and
the LLM judge."""
