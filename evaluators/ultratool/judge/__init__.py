"""UltraTool's point-wise LLM judge: prompts, the official prompts read at run time, judging,
replay of recorded judgments and agreement."""
