"""Trivia: one-line questions in French and Spanish, a toy benchmark written as an outside
package against the public names of ``tooleval_agents`` only (docs/plugins.md)."""

from tooleval_trivia.benchmark import BENCHMARK, Trivia

__all__ = ["BENCHMARK", "Trivia"]
