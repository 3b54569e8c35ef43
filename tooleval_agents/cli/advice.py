"""What a run tells its user beyond its scores: why examples were left unscored and what to
do about it, and a note before a run on a local server."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from tooleval_agents.results.rundir import RunDir

FIX_FIRST = frozenset({"auth", "not_found", "aborted"})
"""Infra error kinds a retry does not cure: a rejected key or an unknown model (``aborted``:
the examples left unrun after one of those)."""


def infra_kinds(run_dir: Path) -> tuple[Counter[str], str | None]:
    """Error kinds of the infra errors left in a run directory, and the first error message
    of a kind a retry does not cure (auth, not_found), else the first of any kind."""
    kinds: Counter[str] = Counter()
    first: str | None = None
    any_error: str | None = None
    for result in RunDir(run_dir).results().values():
        if result.status != "infra_error":
            continue
        kind = result.error_kind or "unknown"
        kinds[kind] += 1
        if first is None and kind in FIX_FIRST - {"aborted"} and result.error:
            first = result.error
        any_error = any_error or result.error
    return kinds, first or any_error


def judge_advice(counts: dict[str, Any], run_dir: Path) -> str | None:
    """What to say when the judge failed on some or all examples (``None``: it did not)."""
    failed = int(counts.get("judge_errors", 0))
    if not failed:
        return None
    first = next((str((r.score or {}).get("error")) for r in RunDir(run_dir).results().values()
                  if ((r.score or {}).get("labels") or {}).get("judge") == "error"), "")
    judged = int(counts.get("judged", 0))
    lead = ("no example could be judged" if not judged
            else f"{failed} example(s) could not be judged ({judged} were)")
    return (f"{lead}: {first[:200]}. Check --judge and --judge-arg (endpoint, key), then "
            f"re-judge the stored outputs without re-running the model: tooleval score --run "
            f"{run_dir} --judge ...")


def infra_advice(count: int, kinds: Counter[str], first: str | None) -> str:
    """What to do about the infra errors left after a run."""
    listed = ", ".join(f"{k}: {n}" for k, n in kinds.most_common())
    if set(kinds) == {"context_overflow"}:
        return (f"{count} example(s) not scored ({listed}): the prompt did not fit the model's "
                "context window. Give the model a longer context (e.g. a llama.cpp server's "
                "--n_ctx) or use a model with one, then run the same command again: only these "
                "examples run.")
    if FIX_FIRST & set(kinds):
        detail = f" ({first[:200]})" if first else ""
        return (f"{count} example(s) not scored ({listed}): the provider rejected the API key "
                f"or does not know the model{detail}. Fix the key (environment variable or "
                "--model-arg) or the --model name, then run the same command again: finished "
                "examples are kept.")
    cause = f"; e.g. {first.splitlines()[0][:200]}" if first else ""
    return (f"{count} example(s) failed on the provider side and are not scored ({listed}"
            f"{cause}): run the same command again to retry them.")


_LOOPBACK = re.compile(r"^\w+://(?:localhost|127(?:\.\d+){3}|\[::1\])(?::\d+)?(?:/|$)")


def local_server_hint(model_kwargs: dict[str, Any], max_concurrency: int) -> str | None:
    """A note when a provider model on a loopback server gets several requests at once: most
    local servers (llama.cpp, llama-cpp-python) answer one at a time, so the others queue and
    their waiting counts towards --timeout."""
    url = next((v for k, v in model_kwargs.items()
                if k in ("base_url", "api_base", "openai_api_base") and isinstance(v, str)), None)
    if url is None or max_concurrency == 1 or not _LOOPBACK.match(url):
        return None
    return (f"the model is served on this machine ({url}); a local server usually answers one "
            f"request at a time, so with --max-concurrency {max_concurrency} requests queue and "
            "the wait counts towards --timeout. Use --max-concurrency 1 unless the server "
            "runs requests in parallel.")
