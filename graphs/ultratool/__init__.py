"""UltraTool workflows: the paper's one-shot protocol, native tool calling, plan-create-use,
prompts (ours and the official ones read at run time) and construction."""
