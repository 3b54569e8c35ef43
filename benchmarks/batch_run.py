"""``tooleval run --batch`` on a whole split against a fake OpenAI Batch API on 127.0.0.1.

``tests/fake_batch.py`` serves the Batch API (files, batches, output files), answering every
request as the ``reference`` model would. Two runs of ``tooleval run appbench --category ss
--strategy flat --model openai:gpt-4o-mini --batch`` over the first ``--limit`` examples (200:
the whole split):

* straight through: wall time, batches created, examples scored, the cost at batch prices
  and what the same tokens cost at the standard price;
* killed with SIGKILL once its first batch is submitted and polled, before it is collected,
  then run again with the same command: batches created in all (the resume must poll, not
  send again) and examples scored.

    .venv/bin/python benchmarks/batch_run.py [--data-dir ../shared/data] [--limit 200]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_batch import FakeBatchAPI
from reference_server import ReferenceResponder, answer

from tooleval_agents.results.costs import price_for


def command(base_url: str, data_dir: Path, out: Path, limit: int) -> list[str]:
    return [sys.executable, "-m", "tooleval_agents.cli", "run", "appbench", "--category", "ss",
            "--strategy", "flat", "--model", "openai:gpt-4o-mini", "--model-arg",
            f"base_url={base_url}", "--batch", "--batch-wait", "1", "--limit", str(limit),
            "--data-dir", str(data_dir), "--out", str(out), "--no-cache", "--no-progress",
            "--json"]


ENV = {**os.environ, "OPENAI_API_KEY": "sk-test"}


def straight(gold: Any, data_dir: Path, out: Path, limit: int) -> dict[str, Any]:
    with FakeBatchAPI(gold) as api:
        start = time.perf_counter()
        done = subprocess.run(command(api.base_url, data_dir, out, limit), env=ENV,
                              capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        created, requests = api.created, api.requests_in_batches
    if done.returncode != 0:
        raise SystemExit(f"the run failed ({done.returncode}): {done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    usage, cost = report["usage"], report["cost"]
    price = price_for("openai:gpt-4o-mini")
    assert price is not None
    standard = price.cost(usage["input_tokens"], usage["output_tokens"])
    return {"wall_s": round(wall, 1), "batches": created, "requests_in_batches": requests,
            "ok": report["counts"]["ok"], "model_errors": report["counts"]["model_errors"],
            "examples": report["counts"]["examples"],
            "batched_calls": usage["batched_calls"], "model_calls": usage["model_calls"],
            "cost_usd": round(cost["total_usd"], 6), "standard_usd": round(standard or 0, 6),
            "success": report["metrics"].get("success")}


def killed(gold: Any, data_dir: Path, out: Path, limit: int) -> dict[str, Any]:
    with FakeBatchAPI(gold, hold=True) as api:
        args = command(api.base_url, data_dir, out, limit)
        proc = subprocess.Popen(args, env=ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        while not any(method == "GET" and path.startswith("/v1/batches/")
                      for method, path in api.log):
            if proc.poll() is not None:
                raise SystemExit("the run ended before its batch was polled")
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = api.created, api.requests_in_batches
        api.release()
        done = subprocess.run(args, env=ENV, capture_output=True, text=True, check=False)
        after = api.created, api.requests_in_batches
    report = json.loads(done.stdout)
    return {"batches_before_kill": before[0], "requests_before_kill": before[1],
            "batches_in_all": after[0], "requests_in_batches_in_all": after[1],
            "exit": done.returncode, "ok": report["counts"]["ok"],
            "examples": report["counts"]["examples"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path(
        os.environ.get("TOOLEVAL_SHARED_DATA", "../shared/data")))
    parser.add_argument("--limit", type=int, default=200)
    args = parser.parse_args(argv)
    model = ReferenceResponder("appbench", "ss", "flat", data_dir=args.data_dir).model

    def gold(body: dict[str, Any]) -> Any:
        return answer(model, body)

    with tempfile.TemporaryDirectory() as tmp:
        print("straight through:", json.dumps(straight(gold, args.data_dir, Path(tmp) / "a",
                                                      args.limit)))
        print("kill -9 after submitting, same command again:",
              json.dumps(killed(gold, args.data_dir, Path(tmp) / "b", args.limit)))


if __name__ == "__main__":
    main()
