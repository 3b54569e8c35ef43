"""A finished run directory as an inspect_ai eval log (``tooleval export run --format inspect``),
written by inspect_ai's own writer so ``inspect view`` opens it.

What maps to what:

* run (``config.json``) -> :class:`EvalSpec`: task = the split (``appbench-plan-ss``), solver =
  the strategy and its options, model = the model spec and its parameters, packages = our
  recorded versions; the rest of the config (scoring options, judge, tool faults, dataset
  hash...) under ``metadata["tooleval"]``;
* each example's latest attempt -> :class:`EvalSample`: id = its split index, epoch = attempt
  + 1, input = the question (the inputs as JSON when they are more than one text), target = the
  gold answer as JSON, output = the prediction, messages = the prompts sent and the answers
  (tool calls and tool results included), one model event per chat model call, model usage;
* every per-example score -> a :class:`Score` of its own (the metric's comment as its
  explanation), every corpus metric of ``summary.json`` -> an :class:`EvalScore` whose one
  metric ``value`` is our figure (0-100), its 95% interval in the metric's metadata.

inspect_ai is an optional dependency (the ``inspect`` extra): it is imported here only, when a
run is exported.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from tooleval_agents.data.jsonio import writing
from tooleval_agents.errors import ToolevalError, UsageError
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.records import ExampleResult, RunConfig
from tooleval_agents.results.rundir import CONFIG, EXAMPLES, LOCK, SUMMARY, RunDir, RunSummary
from tooleval_agents.results.transcripts import PROMPTS, read_prompts

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ChatMessage, ModelUsage

log = logging.getLogger(__name__)
INSTALL = 'pip install -e ".[inspect]"'
METRIC = "value"
"""The one metric of each exported score: our corpus figure, not always a mean of the sample
scores (F1s pool their counts over examples)."""
SUFFIXES = (".eval", ".json")
RUN_FILES = frozenset({CONFIG, SUMMARY, EXAMPLES, PROMPTS, LOCK})
"""The run directory's own files: an export never writes over them."""


class InspectMissingError(ToolevalError):
    """inspect_ai is not installed (the ``inspect`` extra)."""


def export_inspect(run_dir: Path | str, out: Path | str) -> tuple[int, Path]:
    """Write the run in ``run_dir`` as an inspect_ai log at ``out`` (``.eval``: inspect's zip
    format; ``.json``: its JSON format); return the number of samples and the file.

    Raises:
        UsageError: ``out`` has another suffix, or the run has no ``summary.json`` yet, or
            one that describes an earlier state of the run (it was stopped).
        InspectMissingError: inspect_ai is not installed.
    """
    target = Path(out)
    if target.suffix not in SUFFIXES:
        raise UsageError(f"--out {target}: an inspect log ends in .eval or .json")
    rd = RunDir(run_dir)
    if target.resolve().parent == rd.path.resolve() and target.name in RUN_FILES:
        raise UsageError(f"--out {target} is the run's own {target.name}: writing the log "
                         "there would destroy the run. Choose another file (e.g. "
                         f"{target.with_name(rd.path.name + target.suffix).name} beside it)")
    config = rd.read_config()
    if not (rd.path / SUMMARY).is_file():
        raise UsageError(f"{rd.path} has no {SUMMARY} yet (the run is still going or was "
                         "stopped): finish it by running the same command again, then export")
    summary = rd.read_summary()
    if not rd.summary_is_current(summary):  # its figures are of other examples
        raise UsageError(f"{rd.path}: its {SUMMARY} describes an earlier state of the run "
                         f"(it holds {len(rd.latest())} results now; the run is still going "
                         "or was stopped): finish it by running the same command again, then "
                         "export")
    try:
        from inspect_ai.log import write_eval_log  # deferred: the optional inspect extra
    except ImportError as exc:
        raise InspectMissingError(f"exporting to inspect needs inspect_ai: {INSTALL}") from exc
    log = eval_log(rd, config, summary)
    _write(log, target, write_eval_log)
    return len(log.samples or []), target


def _write(log: EvalLog, target: Path, write_eval_log: Any) -> None:
    """Write ``log`` at ``target``: inspect's writer works in a folder of the system's
    temporary folder (its ``.inspect_tmp_*`` files never land beside OUT, even when the export
    is killed), then the log's bytes are written beside ``target`` under a name of ours and
    renamed over it: OUT is the old log or the new one, never half of one. A copy left by a
    killed export is replaced by the next export to the same OUT."""
    partial = target.with_name(f".{target.name}.partial")
    with tempfile.TemporaryDirectory(prefix="tooleval-export-") as stage, writing(target):
        staged = Path(stage) / f"log{target.suffix}"  # the suffix tells inspect the format
        write_eval_log(log, str(staged))
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            partial.write_bytes(staged.read_bytes())  # bytes at hand: a kill's short window
            partial.replace(target)
        finally:
            partial.unlink(missing_ok=True)


def eval_log(rd: RunDir, config: RunConfig, summary: RunSummary) -> EvalLog:
    """The :class:`EvalLog` of a run (every example's latest attempt, in split order)."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, EvalStats

    prompts = read_prompts(rd.path)
    trusted, left_out = rd.trusted()  # a changed line is no example of the run
    if left_out:
        log.warning("%s", left_out)
    results = sorted(trusted.values(), key=lambda r: (r.index, r.epoch))
    model = str(config.model.get("spec") or "unknown")
    judge = (config.judge or {}).get("spec")
    samples = [_sample(r, prompts, model, judge) for r in results]
    digest = hashlib.sha256(f"{config.experiment}\n{config.created_at}".encode()).hexdigest()
    spec = EvalSpec(
        eval_id=digest[:22], run_id=digest[22:44], task_id=config.dataset.hash[:22],
        created=config.created_at, task=config.dataset.name,
        task_display_name=config.experiment,
        solver=config.strategy, solver_args=dict(config.strategy_options),
        model=model, model_args=dict(config.model.get("params") or {}),
        dataset=EvalDataset(name=config.dataset.name, location=config.dataset.data_dir,
                            samples=config.dataset.total,
                            sample_ids=sorted({r.index for r in results})),
        config=EvalConfig(epochs=config.epochs, limit=config.dataset.examples),
        packages=dict(config.versions),
        metadata={"tooleval": config.model_dump(mode="json", include={
            "experiment", "benchmark", "task", "subset", "agent", "judge", "scoring_options",
            "tool_faults", "dataset", "langsmith"})})
    usage: dict[str, ModelUsage] = {}
    for sample in samples:
        for name, u in sample.model_usage.items():
            usage[name] = usage[name] + u if name in usage else u
    stats = EvalStats(started_at=config.created_at, completed_at=summary.finished_at,
                      model_usage=usage)
    return EvalLog(status="success", eval=spec, results=_results(config, summary, len(samples)),
                   stats=stats, samples=samples)


def _results(config: RunConfig, summary: RunSummary, n: int) -> Any:
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore, HeadlineMetric

    scores = []
    for name, value in summary.metrics.items():
        if value is None:  # not computed for this run: listed in the metadata, never a 0
            continue
        ci = summary.ci.get(name)
        scores.append(EvalScore(name=name, scorer=name, scored_samples=summary.counts.get(
            "scored"), metrics={METRIC: EvalMetric(name=METRIC, value=float(value),
                                                   metadata={"ci95": ci} if ci else None)}))
    head = next((m for m in _headline(config) if summary.metrics.get(m) is not None), None)
    return EvalResults(
        total_samples=n, completed_samples=summary.counts.get("scored", n), scores=scores,
        headline=HeadlineMetric(scorer=head, metric=METRIC) if head else None,
        metadata={"counts": summary.counts, "format_error_rate": summary.format_error_rate,
                  "not_computed": {**{m: "n/a on every example" for m, v in
                                      summary.metrics.items() if v is None},
                                   **summary.not_computed},
                  "usage": summary.usage, "latency_s": summary.latency_s,
                  "cost": summary.cost, "epochs": summary.epochs, "notes": summary.notes})


def _headline(config: RunConfig) -> list[str]:
    """The benchmark's headline metrics for the run's split (none for an unknown benchmark)."""
    try:
        bench = get_benchmark(config.benchmark)
        return list(bench.scorer(bench.split(config.task, config.subset),
                                 options=config.scoring_options).headline)
    except Exception:  # an unregistered benchmark, or a scorer that needs its judge
        return []


def _sample(r: ExampleResult, prompts: dict[str, Any], model: str,
            judge: str | None) -> EvalSample:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    score = r.score or {}
    comments = score.get("comments") or {}
    prediction = _text(r.outputs.get("prediction"))
    scores = {name: Score(value=float(v), answer=prediction, explanation=comments.get(name))
              for name, v in (score.get("scores") or {}).items() if v is not None}
    usage = {model: _usage(r.usage.input_tokens, r.usage.output_tokens,
                           r.usage.cached_input_tokens)}
    judged = r.judge_usage.input_tokens + r.judge_usage.output_tokens
    if judge and judged:
        extra = _usage(r.judge_usage.input_tokens, r.judge_usage.output_tokens,
                       r.judge_usage.cached_input_tokens)
        usage[judge] = usage[judge] + extra if judge in usage else extra
    done = datetime.fromisoformat(r.finished_at)
    messages, events = _conversation(r, prompts, model)
    return EvalSample(
        id=r.index, epoch=r.epoch + 1, input=_input(r.inputs), target=_text(r.reference_outputs),
        messages=messages, events=events,
        output=ModelOutput.from_content(model, prediction, error=r.error),
        scores=scores or None, model_usage=usage,
        started_at=(done - timedelta(seconds=r.latency_s)).isoformat(),
        completed_at=r.finished_at, total_time=r.latency_s, working_time=r.latency_s,
        # an infra error is no answer (left out of our metrics, as inspect leaves errors out)
        error=EvalError(message=r.error or "infra error", traceback="", traceback_ansi="")
        if r.status == "infra_error" else None,
        metadata={"example_id": r.example_id, "status": r.status, "error": r.error,
                  "error_kind": r.error_kind, "format_error": r.format_error,
                  "score_error": score.get("error"), "labels": score.get("labels") or {},
                  "parts": score.get("parts") or {}, "attempt": r.attempt,
                  "retries": r.retries,
                  "raw_outputs": r.outputs.get("raw_outputs") or [],
                  "trace": r.outputs.get("trace") or [],
                  "tool_calls": r.tool_calls.model_dump() if r.tool_calls else None})


def _usage(input_tokens: int, output_tokens: int, cached: int) -> ModelUsage:
    from inspect_ai.model import ModelUsage

    # inspect counts cached input tokens apart from input_tokens; ours are part of them
    return ModelUsage(input_tokens=input_tokens - cached, output_tokens=output_tokens,
                      total_tokens=input_tokens + output_tokens,
                      input_tokens_cache_read=cached or None)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)


def _input(inputs: dict[str, Any] | None) -> str:
    """The question when the inputs hold one text (AppBench), else the inputs as JSON."""
    texts = [v for v in (inputs or {}).values() if isinstance(v, str)]
    return texts[0] if inputs and len(inputs) == 1 and texts else _text(inputs or {})


def _conversation(r: ExampleResult, prompts: dict[str, Any],
                  model: str) -> tuple[list[ChatMessage], list[Any]]:
    """Every message sent and every answer, once each, in order (an agent's later calls resend
    the earlier ones), and one model event per chat model call."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import GenerateConfig, ModelOutput

    messages: list[ChatMessage] = []
    seen: set[str] = set()
    pending: dict[str, Any] | None = None  # the last answer, unless the next call resends it
    events = []
    for call in r.model_calls:
        sent = [prompts.get(m) or {"role": "user", "content": f"(message {m} not stored)"}
                for m in call.messages]
        new = [(m, v) for m, v in zip(call.messages, sent, strict=True) if m not in seen]
        if pending is not None and not (new and _same(new[0][1], pending)):
            messages.append(_message(pending))
        seen.update(call.messages)
        messages.extend(_message(v) for _, v in new)
        pending = call.output
        answer = _message(call.output) if call.output else None
        tools = _tools(prompts, call.tools)
        events.append(ModelEvent(
            model=model, input=[_message(v) for v in sent], tools=tools,
            tool_choice="auto" if tools else "none", config=GenerateConfig(), error=call.error,
            output=ModelOutput.from_message(answer) if answer is not None
            else ModelOutput.from_content(model, "", error=call.error)))
    if pending is not None:
        messages.append(_message(pending))
    return messages, events


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("role", "content", "tool_calls"))


def _message(value: dict[str, Any]) -> ChatMessage:
    """One of our stored messages (LangChain's roles) as inspect's."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )
    from inspect_ai.tool import ToolCall

    role, content = value.get("role"), _text(value.get("content") or "")
    if role in ("ai", "assistant"):
        calls = [ToolCall(id=str(c.get("id") or f"call_{k}"), function=str(c.get("name")),
                          arguments=c.get("args") if isinstance(c.get("args"), dict) else {})
                 for k, c in enumerate(value.get("tool_calls") or [])]
        return ChatMessageAssistant(content=content, tool_calls=calls or None)
    if role == "tool":
        return ChatMessageTool(content=content, tool_call_id=value.get("tool_call_id"),
                               function=value.get("name"))
    if role == "system":
        return ChatMessageSystem(content=content)
    return ChatMessageUser(content=content)


def _tools(prompts: dict[str, Any], tools_id: str | None) -> list[Any]:
    """The tool definitions bound to a call (OpenAI's function format) as inspect's; one that
    inspect cannot read is left out."""
    from inspect_ai.tool import ToolInfo

    out = []
    for tool in (prompts.get(tools_id) if tools_id else None) or []:
        fn = tool.get("function", tool) if isinstance(tool, dict) else {}
        try:
            out.append(ToolInfo.model_validate({"name": fn.get("name"),
                                                "description": fn.get("description") or "",
                                                "parameters": fn.get("parameters") or {}}))
        except ValidationError:
            continue
    return out


__all__ = ["INSTALL", "InspectMissingError", "eval_log", "export_inspect"]
