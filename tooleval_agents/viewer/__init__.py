"""``tooleval view``: finished runs as a static site that opens from ``file://``, offline.

One folder: ``index.html``, the page's script and style (``app.js``, ``style.css``, ours, no
CDN), and ``data/`` with each run's examples as JavaScript files the page loads on demand
(``<script>`` tags: a page opened from ``file://`` may not ``fetch`` files). Per run:

* ``data/<run>/index.js``: one row per example (id, index, status, error kind --
  ``format_error`` for a finished answer that could not be read --, the verdict's reason,
  scores, tokens, latency): the run page's sortable, filterable, paginated table;
* ``data/<run>/chunk-<k>.js``: :data:`CHUNK` examples each, complete (inputs, gold answer,
  every model call with its messages and tools resolved from the run's ``prompts.jsonl``, raw
  outputs, prediction, scores with comments, trace), loaded when one of them is opened.

The page lists the runs (headline metrics, n of N), shows a run's examples, one example, and
the same example in two runs side by side (runs over the same split). Nothing in the site is
executed as HTML: every value is inserted as text.

Example::

    tooleval view runs/ --out site/      # then open site/index.html
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooleval_agents.data.jsonio import atomic_write_text, writing
from tooleval_agents.data.paths import inside
from tooleval_agents.models.tool_calls.counts import FORMAT_ERRORS
from tooleval_agents.results.compare_view import sandbox_trait
from tooleval_agents.results.costs import price_for
from tooleval_agents.results.dirlock import holder
from tooleval_agents.results.records import ExampleResult
from tooleval_agents.results.rescore import current_summary
from tooleval_agents.results.rundir import CONFIG, RunDir, RunSummary
from tooleval_agents.results.transcripts import read_prompts
from tooleval_agents.verdict import Verdict
from tooleval_agents.viewer.verdicts import Explainer

FORMAT_ERROR = "format_error"
"""Error kind of a finished example whose answer could not be read in its task's format."""
CHUNK = 50
"""Examples per detail file: opening one example loads its chunk only."""
ASSETS = ("index.html", "app.js", "style.css")
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Site:
    """What :func:`build_site` wrote."""

    out: Path
    runs: int
    examples: int

    @property
    def index(self) -> Path:
        return self.out / "index.html"


def find_runs(paths: Sequence[Path | str]) -> list[Path]:
    """Run directories as given; a folder holding runs (any depth) replaced by those runs."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if (path / CONFIG).is_file():
            out.append(path)
        elif path.is_dir():
            found = sorted(p.parent for p in path.rglob(CONFIG))
            if not found:
                raise FileNotFoundError(f"{path} holds no run (no {CONFIG} under it)")
            out.extend(found)
        else:
            raise FileNotFoundError(f"{path} is not a run directory or a folder of runs")
    return list(dict.fromkeys(p.resolve() for p in out))


def _script(key: str, value: Any) -> str:
    # JSON is valid JavaScript; "</" is escaped so no value can close the script element.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    return f"TOOLEVAL.put({json.dumps(key)},{text});\n"


def _run_id(path: Path, taken: set[str]) -> str:
    base = "".join(c if c.isalnum() or c in "-_." else "_" for c in path.name)[:80] or "run"
    rid = base
    if rid in taken:
        rid = f"{base}-{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
    taken.add(rid)
    return rid


def _key(result: Any) -> str:
    """An example's name in the site's links: ``37``, or ``37@2`` for its third attempt."""
    return str(result.index) if not result.epoch else f"{result.index}@{result.epoch}"


def _row(result: Any, verdict: Verdict) -> dict[str, Any]:
    score = result.score or {}
    # An answer that could not be read finished "ok" but measured nothing: its kind says so.
    unread = result.format_error
    return {"passed": verdict.passed, "reason": _reason_kind(verdict),
            "why": verdict.reason[:200],
            "id": result.example_id, "index": result.index, "epoch": result.epoch,
            "key": _key(result),
            "status": result.status,
            "error_kind": FORMAT_ERROR if unread else result.error_kind,
            "scores": score.get("scores") or {},
            "error": (result.error or unread or score.get("error") or "")[:300],
            "tokens": result.usage.input_tokens + result.usage.output_tokens,
            "judge_tokens": result.judge_usage.input_tokens + result.judge_usage.output_tokens,
            "calls": result.usage.model_calls, "latency_s": round(result.latency_s, 3)}


def _reason_kind(verdict: Verdict) -> str:
    """The verdict's reason without its particulars (``missing call``, ``format error``): the
    run page's facet."""
    if verdict.passed:
        return "passed"
    if verdict.reason.startswith("injected "):
        return "injected fault"
    head = verdict.reason.split("`")[0].split(":")[0].split("=")[0].split("(")[0]
    return " ".join(head.split()[:2]).strip() or "failed"


def _detail(result: Any, prompts: dict[str, Any], verdict: Verdict) -> dict[str, Any]:
    calls = []
    for call in result.model_calls:
        calls.append({"messages": [prompts.get(m, {"role": "?", "content": f"(message {m} "
                                                    "missing from prompts.jsonl)"})
                                   for m in call.messages],
                      "tools": prompts.get(call.tools) if call.tools else None,
                      "output": call.output, "error": call.error,
                      "request": call.request})
    return {**result.model_dump(mode="json", exclude={"model_calls"}), "key": _key(result),
            "model_calls": calls, "verdict": verdict.to_json()}


def _headline(explainer: Explainer, metrics: dict[str, Any]) -> list[str]:
    """The benchmark's headline metrics for the run's split, else its first four."""
    return [m for m in explainer.headline if m in metrics] or list(metrics)[:4]


def _write_run(path: Path, rid: str, data_dir: Path) -> tuple[dict[str, Any], int]:
    rd = RunDir(path)
    config = rd.read_config()
    summary = _summary(rd)
    trusted, left_out = rd.trusted()  # a changed line is no example of the run
    results = sorted(trusted.values(), key=lambda r: (r.index, r.epoch))
    explainer = Explainer.of(config)
    verdicts = {id(r): explainer.verdict(r) for r in results}
    prompts = read_prompts(path)
    folder = inside(data_dir, rid, what="run id")
    folder.mkdir(parents=True, exist_ok=True)
    chunks: dict[str, int] = {}
    for k in range(0, len(results), CHUNK):
        part = results[k:k + CHUNK]
        for r in part:
            chunks[r.example_id] = k // CHUNK
        atomic_write_text(folder / f"chunk-{k // CHUNK}.js", _script(
            f"{rid}/chunk-{k // CHUNK}", [_detail(r, prompts, verdicts[id(r)]) for r in part]))
    rows = [{**_row(r, verdicts[id(r)]), "chunk": chunks[r.example_id]} for r in results]
    atomic_write_text(folder / "index.js", _script(f"{rid}/index", rows))
    meta = {"id": rid, "path": str(path), "experiment": config.experiment,
            "benchmark": config.benchmark, "task": config.task, "subset": config.subset,
            "split": config.dataset.name, "strategy": config.strategy,
            "strategy_options": config.strategy_options, "agent": config.agent,
            "sealed": None if config.agent_cmd is None else not config.unsealed,
            "model": config.model.get("spec"), "judge": (config.judge or {}).get("spec"),
            "scoring_options": config.scoring_options,
            "options": _options(config),
            "examples": len(results), "split_examples": config.dataset.total,
            "state": _state(path, summary is not None and not summary.recomputed),
            "planned": config.dataset.examples * config.epochs,
            "created_at": config.created_at,
            "metrics": summary.metrics if summary else {},
            "headline": _headline(explainer, summary.metrics if summary else {}),
            "counts": _counts(summary, results),
            "not_computed": summary.not_computed if summary else {},
            "notes": [*(summary.notes if summary else []), *([left_out] if left_out else [])],
            "usage": summary.usage if summary else {},
            "latency_s": summary.latency_s if summary else {},
            "cost": summary.cost if summary else {},
            "spent": summary.spent if summary else {},
            "session": summary.session if summary else {},
            "ci": summary.ci if summary else {},
            "prices": {"model": _price(config.model.get("spec")),
                       "judge": _price((config.judge or {}).get("spec"))}}
    return meta, len(results)


def _summary(rd: RunDir) -> RunSummary | None:
    """The figures of the results the run holds now: a summary.json that describes an
    earlier state of it (a stopped run) is recomputed, never shown for these examples; one
    that cannot be (its benchmark is not installed here) is not shown at all."""
    try:
        return current_summary(rd)
    except (KeyError, ValueError):  # an unregistered benchmark: its scorer is out of reach
        return None


def _state(path: Path, finished: bool) -> str:
    """``running`` (a live process holds the run), ``finished`` (its summary is written and
    describes the results it holds), else ``stopped`` (interrupted before its summary: the
    same command resumes it)."""
    if holder(path) is not None:
        return "running"
    return "finished" if finished else "stopped"


_NOT_OPTIONS = {"model", "model_name", "answers"}
"""Model parameters that name the model or fingerprint its answers: the model column says it."""


def _options(config: Any) -> dict[str, str]:
    """What a user may set besides split, strategy and model, flat (``epochs``,
    ``strategy.<k>``, ``scoring.<k>``, ``model.<param>``, ``judge``, ``agent``, ``samples``):
    the index shows those that differ between runs."""
    out = {"epochs": str(config.epochs), "agent": config.agent or "",
           "sandbox": sandbox_trait(config),
           "judge": (config.judge or {}).get("spec") or "",
           "samples": config.dataset.samples or ""}
    out.update({f"strategy.{k}": str(v) for k, v in config.strategy_options.items()})
    out.update({f"scoring.{k}": str(v) for k, v in config.scoring_options.items()})
    params = config.model.get("params") or {}
    out.update({f"model.{k}": str(v) for k, v in params.items()
                if k not in _NOT_OPTIONS and len(str(v)) <= 40})
    return out


def _counts(summary: RunSummary | None, results: Sequence[ExampleResult]) -> dict[str, int]:
    """The summary's counts; ``format_errors`` counted from the results when the summary was
    written before it was counted."""
    counts = dict(summary.counts) if summary else {}
    if summary is not None and FORMAT_ERRORS not in counts:
        counts[FORMAT_ERRORS] = sum(r.format_error is not None for r in results)
    return counts


def _price(spec: str | None) -> dict[str, Any] | None:
    price = price_for(spec)
    return None if price is None else dataclasses.asdict(price)


def _swap(new: Path, current: Path) -> None:
    """Put the folder ``new`` in the place of ``current`` (two renames, microseconds apart),
    then remove the old one."""
    old = current.with_name(".data.old")
    if old.exists():
        shutil.rmtree(old)
    if current.exists():
        current.rename(old)
    new.rename(current)
    shutil.rmtree(old, ignore_errors=True)


def build_site(paths: Sequence[Path | str], out: Path | str, *,
               live: float | None = None) -> Site:
    """Write the site for the runs under ``paths`` into ``out`` (its ``index.html``, assets
    and ``data/`` are replaced; nothing else in ``out`` is touched). ``live``: the site is
    served and rewritten every ``live`` seconds (``tooleval view --serve``), so its run list
    and run pages reload themselves at that pace while a run is going."""
    runs = find_runs(paths)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    # Written beside the old data, then swapped in: a served page that loads while the site
    # is rewritten (every few seconds during a run) finds the old files or the new ones.
    data_dir = target / ".data.new"
    if data_dir.exists():
        shutil.rmtree(data_dir)
    try:  # a failure (a full disk) leaves the site as it was, and no .data.new beside it
        with writing(data_dir):
            data_dir.mkdir()
        taken: set[str] = set()
        metas = []
        total = 0
        for path in runs:
            meta, n = _write_run(path, _run_id(path, taken), data_dir)
            metas.append(meta)
            total += n
        atomic_write_text(data_dir / "runs.js", _script("runs", metas) + (
            _script("live", {"every": live}) if live is not None else ""))
        for name in ASSETS:
            atomic_write_text(target / name, (HERE / name).read_text(encoding="utf-8"))
        with writing(target / "data"):
            _swap(data_dir, target / "data")
    except BaseException:
        shutil.rmtree(data_dir, ignore_errors=True)
        raise
    return Site(out=target, runs=len(metas), examples=total)


__all__ = ["CHUNK", "Site", "build_site", "find_runs"]
