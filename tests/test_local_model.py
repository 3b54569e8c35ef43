"""The portability check of the local model's build (``.ci/run`` rebuilds llama-cpp-python
when it fails): a native build on a machine that advertises AMX crashes where AMX traps."""

from __future__ import annotations

from local_model import portability_problem

PORTABLE = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 "
            "| LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | ")
"""What the portable build (GGML_NATIVE=OFF) of llama-cpp-python 0.3.36 prints."""


def test_a_portable_build_passes() -> None:
    assert portability_problem(PORTABLE) is None


def test_a_native_build_is_named() -> None:
    amx = PORTABLE + "AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | "
    problem = portability_problem(amx)
    assert problem is not None and "AMX_INT8, AVX512, AVX512_VNNI" in problem
    assert "GGML_NATIVE=OFF" in problem and "pip cache remove" in problem
    # A feature reported off is not a problem.
    assert portability_problem(PORTABLE + "AVX512 = 0 | ") is None
