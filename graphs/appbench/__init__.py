"""AppBench workflows: the planning strategies, native tool calling, prompts (ours and the official
ones read at run time), construction and export."""
