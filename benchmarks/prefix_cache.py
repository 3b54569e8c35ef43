"""How much of a run's input a prefix cache can serve, per strategy.

Two measurements:

* ``sent`` (the default): each strategy runs on the first ``--limit`` examples against the
  ``reference`` model served on 127.0.0.1 (``tests/reference_server.py``: a provider run in
  every respect, so the request scheduler orders it as it would a real model's), at
  ``--max-concurrency 1``; then the requests the run sent, in the order they left (the
  transcripts' ``sent_at``; file order for runs written before it was kept), are tokenized
  with SmolLM2's tokenizer (characters / 4 without the ``local`` extra) and each request's
  longest common prefix is counted against (a) the request just before it -- what a server
  that keeps one prompt serves (llama.cpp, llama-cpp-python without ``--cache``) -- and (b)
  any earlier request -- a cache that keeps them all (llama-cpp-python's ``--cache`` with room
  enough; a provider's) -- and (c) as OpenAI bills it: (b) from 1,024 tokens on, in steps of
  128. ``--runs DIR...`` measures run directories made elsewhere instead (another commit's).
* ``server``: llama-cpp-python's server with SmolLM2 on 127.0.0.1 (``--cache`` adds its RAM
  prompt cache) and ``tooleval run`` as a user types it (``--max-concurrency 1``): the wall
  time, and from the server's own log the prompt tokens, those it took from its cache
  (its "prefix-match hit" counts) and its prompt-evaluation and decoding time. The run is a
  subprocess of this interpreter started in ``--checkout`` (this one by default) with that
  folder on ``PYTHONPATH``: ``--checkout <a worktree of another commit>`` measures that
  commit's code against the same server (its commit is in the output). The load average is
  sampled while the run lasts (mean and highest 1-minute figure): the seconds depend on it,
  the token counts do not.

    .venv/bin/python benchmarks/prefix_cache.py [--data-dir ../shared/data] [--limit 6]
    .venv/bin/python benchmarks/prefix_cache.py --runs runs/appbench-plan-ss-*
    .venv/bin/python benchmarks/prefix_cache.py server --strategy hierarchical --limit 6 \\
        [--cache] [--threads 2] [--n-ctx 16384] [--checkout ../old-worktree]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

try:
    import llama_cpp
except ImportError:  # the local extra is not installed: tokens are estimated
    llama_cpp = None  # type: ignore[assignment]

from fake_openai import FakeOpenAI
from local_model import ALIAS, gguf, serve_logged
from reference_server import ReferenceResponder

from tooleval_agents.models.scheduling import common_prefix
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.results.transcripts import read_prompts
from tooleval_agents.run.runner import run_experiment

ROWS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("flat", {}), ("tools", {}), ("hierarchical", {}),
    ("flat", {"prompts": "official"}), ("hierarchical", {"prompts": "official"}))
"""Strategy and options of each row of ``sent``."""
OPENAI_MIN, OPENAI_STEP = 1024, 128
"""OpenAI's automatic prompt caching: prompts from 1,024 tokens, hits in steps of 128."""


# ----------------------------------------------------------------------------- requests sent


def _render(call: dict[str, Any], prompts: dict[str, Any]) -> str:
    """A request as a ChatML prompt (SmolLM2's template): tools first, then each message."""
    parts = []
    if call.get("tools"):
        tools = json.dumps(prompts.get(call["tools"]), ensure_ascii=False, sort_keys=True)
        parts.append(f"<|im_start|>system\n{tools}<|im_end|>\n")
    for mid in call.get("messages") or []:
        message = prompts.get(str(mid)) or {}
        role = str(message.get("role"))
        role = {"human": "user", "ai": "assistant"}.get(role, role)
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if message.get("tool_calls"):
            text += json.dumps(message["tool_calls"], ensure_ascii=False)
        parts.append(f"<|im_start|>{role}\n{text}<|im_end|>\n")
    return "".join(parts)


def requests_sent(run_dir: Path) -> list[str]:
    """The prompts a run sent to its model, in the order they left (answers the response
    cache gave never left)."""
    prompts = read_prompts(run_dir)
    calls: list[tuple[float, int, str]] = []
    for result in RunDir(run_dir).iter_results():
        for call in result.model_calls:
            record = call.model_dump()
            if record.get("output") is None and record.get("error") is None:
                continue
            sent = getattr(call, "sent_at", None)
            calls.append((sent if sent is not None else float(len(calls)), len(calls),
                          _render(record, prompts)))
    return [text for _, _, text in sorted(calls)]


def tokenizer() -> tuple[str, Callable[[str], list[int]]]:
    """SmolLM2's tokenizer when the ``local`` extra is installed, else 4 characters a token."""
    path = gguf()
    if llama_cpp is not None and path is not None:
        llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        return "SmolLM2 tokens", lambda text: llm.tokenize(text.encode(), add_bos=False,
                                                            special=True)
    return "~tokens (chars/4)", lambda text: [hash(text[i:i + 4])
                                              for i in range(0, len(text), 4)]


@dataclass
class Share:
    """Input tokens of a run's requests and the part each kind of prefix cache serves."""

    requests: int = 0
    tokens: int = 0
    last: int = 0
    """Shared with the request just before (a one-prompt server cache)."""
    any: int = 0
    """Shared with any earlier request (a cache that keeps them all)."""
    openai: int = 0
    """``any`` as OpenAI bills it (from 1,024 tokens, in steps of 128)."""

    def row(self) -> dict[str, Any]:
        def pct(n: int) -> float:
            return round(100 * n / self.tokens, 1) if self.tokens else 0.0
        return {"requests": self.requests, "input_tokens": self.tokens,
                "last_pct": pct(self.last), "any_pct": pct(self.any),
                "openai_pct": pct(self.openai)}


def cacheable(texts: Sequence[str], tokenize: Callable[[str], list[int]]) -> Share:
    """What a prefix cache could serve of ``texts``, sent in this order."""
    share = Share()
    seen: list[list[int]] = []
    for text in texts:
        tokens = tokenize(text)
        last = common_prefix(seen[-1], tokens) if seen else 0
        best = max((common_prefix(s, tokens) for s in seen), default=0)
        best = min(best, len(tokens) - 1) if tokens else 0  # the last token is always read
        share.requests += 1
        share.tokens += len(tokens)
        share.last += min(last, best)
        share.any += best
        share.openai += (best // OPENAI_STEP) * OPENAI_STEP if best >= OPENAI_MIN else 0
        seen.append(tokens)
    return share


def run_rows(data_dir: Path, out: Path, category: str, limit: int) -> list[tuple[str, Path]]:
    """Each row of :data:`ROWS` run against the reference model on 127.0.0.1."""
    done = []
    for strategy, options in ROWS:
        responder = ReferenceResponder("appbench", category, strategy, data_dir=data_dir,
                                       options=options)
        with FakeOpenAI(responder) as server:
            summary = run_experiment(
                "appbench", subset=category, strategy=strategy, strategy_options=options,
                model="openai:gold", model_kwargs={"base_url": server.base_url,
                                                   "api_key": "sk-test"},
                data_dir=data_dir, out=out, limit=limit, max_concurrency=1, cache=False,
                fresh=True, progress=False)
        name = strategy + ("" if not options else f" ({options['prompts']} prompts)")
        done.append((name, Path(str(summary.run_dir))))
    return done


# ----------------------------------------------------------------------------- the server

_PREFIX = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens")
_TIMES = re.compile(r"^llama_perf_context_print:\s+(prompt eval|eval) time =\s+([\d.]+) ms /\s+"
                    r"(\d+)", re.M)


def server_figures(log: str) -> dict[str, float]:
    """Prompt tokens, those served from the server's cache, and prompt-evaluation and
    decoding seconds, from llama-cpp-python's verbose log."""
    hits = [(int(a), int(b)) for a, b in _PREFIX.findall(log)]
    prompt_ms = sum(float(ms) for kind, ms, _ in _TIMES.findall(log) if kind == "prompt eval")
    eval_ms = sum(float(ms) for kind, ms, _ in _TIMES.findall(log) if kind == "eval")
    cached = sum(a for a, _ in hits)
    total = cached + sum(b for _, b in hits)
    return {"requests": len(hits), "prompt_tokens": total, "from_cache": cached,
            "from_cache_pct": round(100 * cached / total, 1) if total else 0.0,
            "prompt_eval_s": round(prompt_ms / 1000, 1), "decode_s": round(eval_ms / 1000, 1)}


def checkout_commit(checkout: Path) -> str:
    """The commit ``checkout`` holds (with ``+changes`` when its tracked files differ)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(checkout), *args], capture_output=True,
                              text=True, check=False).stdout.strip()
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def run_sampling_load(command: list[str], cwd: Path, env: dict[str, str],
                      every: float = 10.0) -> tuple[int, str, list[float]]:
    """Run ``command``; its exit status, its stderr and the 1-minute load average sampled
    every ``every`` seconds while it ran."""
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                stderr=err, text=True)
        while True:
            try:
                proc.wait(timeout=every)
                break
            except subprocess.TimeoutExpired:
                loads.append(os.getloadavg()[0])
        loads.append(os.getloadavg()[0])
        err.seek(0)
        return proc.returncode, err.read(), loads


def measure_server(args: argparse.Namespace) -> dict[str, Any]:
    """One ``tooleval run`` against llama-cpp-python's server (see the module docstring)."""
    model = gguf()
    if model is None:
        raise SystemExit("the local extra is not installed (pip install -e \".[local]\")")
    checkout = args.checkout.resolve()
    if not (checkout / "tooleval_agents" / "cli").is_dir():
        raise SystemExit(f"--checkout {args.checkout}: not a checkout of this project")
    # The checkout first on the path, and the working folder (``-m`` puts it first too):
    # the run imports that commit's code and no other.
    env = {**os.environ, "OPENAI_API_KEY": "local", "PYTHONPATH": str(checkout)}
    with tempfile.TemporaryDirectory() as tmp, serve_logged(
            Path(tmp) / "server.log", n_ctx=args.n_ctx, threads=args.threads,
            cache=args.cache) as (url, log_path):
        command = [sys.executable, "-m", "tooleval_agents.cli", "run", "appbench",
                   "--category", args.category, "--limit", str(args.limit), "--strategy",
                   args.strategy, "--max-concurrency", "1", "--model", f"openai:{ALIAS}",
                   "--model-arg", f"base_url={url}", "--timeout", "3600", "--no-cache",
                   "--out", str(Path(tmp) / "runs"),
                   "--data-dir", str(args.data_dir.resolve())]
        start = time.perf_counter()
        status, stderr, loads = run_sampling_load(command, checkout, env)
        wall = time.perf_counter() - start
        figures = server_figures(log_path.read_text(errors="replace"))
    if status not in (0, 3):
        raise SystemExit(f"tooleval run failed ({status}): {stderr[-2000:]}")
    return {"commit": checkout_commit(checkout), "strategy": args.strategy,
            "limit": args.limit, "cache": args.cache, "wall_s": round(wall, 1), **figures,
            "load_mean": round(sum(loads) / len(loads), 1), "load_max": round(max(loads), 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", nargs="?", default="sent", choices=["sent", "server"])
    parser.add_argument("--data-dir", type=Path, default=Path(
        os.environ.get("TOOLEVAL_SHARED_DATA", "../shared/data")))
    parser.add_argument("--category", default="ss")
    parser.add_argument("--limit", type=int, default=6)
    parser.add_argument("--runs", type=Path, nargs="*", help="measure these run directories")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--strategy", default="hierarchical")
    parser.add_argument("--cache", action="store_true", help="the server's RAM prompt cache")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n-ctx", type=int, default=16384)
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1],
                        help="server: run this checkout's code (a worktree of another commit)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.mode == "server":
        row = measure_server(args)
        print(json.dumps(row) if args.json else "  ".join(f"{k} {v}" for k, v in row.items()))
        return
    with tempfile.TemporaryDirectory() as tmp:
        runs = ([(p.name, p) for p in args.runs] if args.runs
                else run_rows(args.data_dir, args.out or Path(tmp), args.category, args.limit))
        unit, tokenize = tokenizer()
        rows = [{"run": name, **cacheable(requests_sent(path), tokenize).row()}
                for name, path in runs]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'run':<40} {'requests':>8} {'input':>8}  last%  any%  openai%   ({unit})")
    for r in rows:
        print(f"{r['run'][:40]:<40} {r['requests']:>8} {r['input_tokens']:>8}  "
              f"{r['last_pct']:>5} {r['any_pct']:>5} {r['openai_pct']:>7}")


if __name__ == "__main__":
    main()
