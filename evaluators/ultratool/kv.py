"""UltraTool's key-value metrics: awareness and selection accuracy, tool-usage Levenshtein.

The rules are the official scorer's, measured against the published GPT predictions: with the
official answer post-processing (``parser="official"``, :func:`tooleval_agents.evaluators.parsing.
parse_list_official`) they give the paper's Table 2 cells exactly (see
``tests/test_reproduce_ultratool.py``):

* **Step matching.** For each gold step, the *first* predicted item that is a dict with a string
  ``step`` whose id (text before the first space) equals the gold id, and that carries the
  answer key (``tool``; ``param`` for tool usage). Extra predicted steps are ignored; a gold step
  without a match is wrong (0).
* **Awareness** (tool usage and tool creation): ``int(pred.tool) == int(gold.tool)``. A
  prediction that is not an integer (``"yes"``, ``"1.0"``, a list) is wrong, never a crash.
  *Global* = share of samples whose every gold step is right (a sample with no gold step counts
  as right, as upstream); *local* = accuracy pooled over all gold steps.
* **Selection**: the predicted tool name equals the gold one exactly (case-sensitive), after
  ``\\_`` -> ``_`` (markdown escapes); a non-string prediction is wrong.
* **Tool usage**: per gold key, 0 if the predicted ``param`` lacks it, else
  ``1 - levenshtein(gold, str(pred)) / max(len)`` (rapidfuzz, character level, case-sensitive);
  an empty gold value scores 1 only if the prediction is empty too. A step's score is the mean
  over its gold keys; a non-dict ``param`` scores 0. The metric is the mean over all gold steps
  pooled. The predicted tool name is not checked.

By default answers are read by :func:`tooleval_agents.evaluators.parsing.parse_list` instead, which
repairs without rewriting values; :data:`DEVIATIONS` lists every difference. On the published files
it changes the tool-usage score by +0.02 to +0.17 points (Chinese full-width commas survive, more
broken answers are read) and one awareness answer that upstream loses to its ``None``
replacement is read (English GPT-4: 62.60 / 90.94 instead of 62.50 / 90.85).

Each ``score_*`` function is a LangSmith-style evaluator body ``(inputs, outputs,
reference_outputs) -> ExampleScore`` where ``outputs["output"]`` is the model's raw answer (or
an already parsed list) and ``reference_outputs["reference"]`` the gold list; ``aggregate``
pools the per-example parts. :func:`create_kv_evaluator` returns the LangSmith row and summary
evaluators.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal, NamedTuple

from rapidfuzz.distance import Levenshtein

from tooleval_agents.contracts import ExampleScore, Metrics, exact_sum
from tooleval_agents.evaluators.base import langsmith_evaluators
from tooleval_agents.evaluators.parsing import (
    ErrorKind,
    OfficialFamily,
    ParsedList,
    ParseResult,
    ParserMode,
    parse_answer,
    parse_list,
)
from tooleval_agents.results.corpus import Scores, as_corpus

AwarenessTask = Literal["tool_usage_awareness", "tool_creation_awareness"]
KVTask = Literal["tool_usage_awareness", "tool_creation_awareness", "tool_selection",
                 "tool_usage"]
KV_TASKS: tuple[KVTask, ...] = ("tool_creation_awareness", "tool_usage_awareness",
                                "tool_selection", "tool_usage")

JSON_FORMAT = "json_format_rate"
"""Metric name: share of answers from which a list could be read (paper Table 6)."""

DEVIATIONS: tuple[str, ...] = (
    "robust parser: answers are parsed with json / ast.literal_eval and tokenizer-aware "
    "repairs; text inside string values is not rewritten (the official code replaces 'json', "
    "'true', 'null', 'None', newlines and '，' everywhere, changing values or breaking valid "
    "answers)",
    "robust parser: more malformed answers are salvaged (missing or stray brackets, "
    "apostrophes, full-width commas, unquoted <placeholders>, truncation), so "
    "json_format_rate can exceed the paper's Table 6",
    "both parsers: ast.literal_eval instead of eval() (same values on every published answer)",
    "robust parser: a predicted None argument value counts as an empty value (upstream "
    "compares the text 'None' or 'null')",
    "a gold step without arguments scores 1 if the predicted param is an empty dict "
    "(upstream: always 0; no such step exists in the official data)",
    "a matched step whose answer value is invalid is wrong; upstream skips it and may use a "
    "later duplicate of the same step id (no effect on the published files)",
)
"""How this scorer differs from the official code."""

_INT = re.compile(r"\s*[+-]?\d+\s*")
_LABELS = {"0": 0, "1": 1}


def metric_names(task: KVTask) -> tuple[str, ...]:
    """The corpus metrics a task reports, e.g. ``tool_selection_global``, ``..._local``."""
    if task == "tool_usage":
        return ("tool_usage", JSON_FORMAT)
    return (f"{task}_global", f"{task}_local", JSON_FORMAT)


def as_label(value: Any) -> int | None:
    """The awareness label of a predicted ``tool`` value: ``int()`` of an integer, an integral
    float or an integer string; None for anything else (counted wrong).

    >>> [as_label(v) for v in ("1", " 0 ", 1, True, 1.0, "1.0", "yes", None)]
    [1, 0, 1, 1, 1, None, None, None]
    """
    if isinstance(value, str) and value in _LABELS:
        return _LABELS[value]
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str) and len(value) < 100 and _INT.fullmatch(value):
        return int(value)
    return None


def unescape_name(value: str) -> str:
    """Undo markdown escaping of underscores (``file\\_write`` -> ``file_write``)."""
    return value.replace("\\_", "_")


def match_steps(pred: Sequence[Any], gold: Sequence[dict[str, Any]],
                answer_key: str) -> list[dict[str, Any] | None]:
    """For each gold step, the first predicted dict with the same step id and ``answer_key``.

    >>> pred = [{"step": "1.1 a", "tool": "0"}, {"step": "1.1 again", "tool": "1"}]
    >>> match_steps(pred, [{"step": "1.1 a"}, {"step": "1.2 b"}], "tool")
    [{'step': '1.1 a', 'tool': '0'}, None]
    """
    return _match(pred, gold, answer_key).matched


class _StepMatch(NamedTuple):
    """Gold steps paired with predicted items, and what the error analysis needs."""

    gold_ids: list[str]
    matched: list[dict[str, Any] | None]
    pred_ids: list[str]
    """Ids of the predicted ``{step: str}`` items, in order (duplicates kept)."""
    answered: set[str]
    """Ids of predicted items that carry the answer key."""
    other_items: int
    """Predicted list items that are not ``{step: str, ...}`` dicts."""


def _match(pred: Sequence[Any], gold: Sequence[dict[str, Any]], answer_key: str) -> _StepMatch:
    first: dict[str, dict[str, Any]] = {}
    pred_ids: list[str] = []
    other = 0
    for item in pred:
        step = item.get("step") if isinstance(item, dict) else None
        if not isinstance(step, str):
            other += 1
            continue
        sid = step.strip().split(" ", 1)[0]  # step_id(), inlined: this loop is the hot path
        pred_ids.append(sid)
        if sid not in first and answer_key in item:
            first[sid] = item
    gold_ids = [str(g.get("step", "")).strip().split(" ", 1)[0] for g in gold]  # step_id()
    return _StepMatch(gold_ids, [first.get(g) for g in gold_ids], pred_ids, set(first), other)


def value_text(value: Any) -> str:
    """A predicted argument value as text: strings unescaped, None empty, others ``str()``
    (so ``5000`` -> ``"5000"`` and ``["a"]`` -> ``"['a']"``, as the gold values are written)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return unescape_name(value)
    return str(value)


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict | tuple) and len(value) == 0)


_normalized_similarity = Levenshtein.normalized_similarity


def key_value_similarity(gold: str, pred: Any) -> float:
    """``1 - levenshtein(gold, pred) / max(len)``; an empty gold value needs an empty prediction.

    >>> key_value_similarity("abcd", "abce"), key_value_similarity("", None)
    (0.75, 1.0)
    """
    if gold == "":
        return 1.0 if _is_empty(pred) else 0.0
    return Levenshtein.normalized_similarity(gold, value_text(pred))


def step_usage_score(pred: dict[str, Any] | None, gold: dict[str, Any]) -> float:
    """Score in [0, 1] of one tool-usage step: mean key-value similarity over the gold keys."""
    if pred is None:
        return 0.0
    param = pred.get("param")
    if not isinstance(param, dict):
        return 0.0
    return _param_score(_unescaped(param), param, gold)


def _unescaped(param: dict[Any, Any]) -> dict[str, Any]:
    """Predicted argument name (unescaped) -> value; the first one wins."""
    values: dict[str, Any] = {}
    for key, value in param.items():
        if isinstance(key, str):
            if "\\_" in key:
                key = key.replace("\\_", "_")
            if key not in values:
                values[key] = value
    return values


def _param_score(values: dict[str, Any], param: dict[Any, Any], gold: dict[str, Any]) -> float:
    # value_text() and key_value_similarity() inlined: the hot loop of tool-usage scoring.
    gold_params: dict[str, str] = gold.get("param") or {}
    if not gold_params:
        return 1.0 if not param else 0.0
    total = 0.0
    for key, gold_value in gold_params.items():
        if key in values:
            value = values[key]
            text = str(gold_value)
            if text == "":
                total += 1.0 if _is_empty(value) else 0.0
            elif isinstance(value, str):
                total += _normalized_similarity(text, value.replace("\\_", "_"))
            else:
                total += _normalized_similarity(text, "" if value is None else str(value))
    return total / len(gold_params)


# --------------------------------------------------------------------------------------------
# Per-example scoring.

def answer_of(outputs: dict[str, Any]) -> Any:
    """The model's answer in a run's outputs: ``outputs["output"]`` (text or parsed list), else
    the workflow's ``prediction`` -- or the last raw model text (``raw_outputs[-1]``) when
    that text reads as the prediction, or as nothing the prediction contradicts (an empty
    prediction of a failed parse): scoring the text keeps its parse repairs and the JSON-format
    rate, while a strategy whose prediction does not come from its last text (tool calls, an
    agent's final message) is scored on what it predicted."""
    if "output" in outputs:
        return outputs["output"]
    prediction = outputs.get("prediction")
    raw = outputs.get("raw_outputs")
    text = raw[-1] if isinstance(raw, list) and raw and isinstance(raw[-1], str) else None
    if text is None:
        return prediction
    if not prediction:
        return text
    parsed = parse_list(text)
    return text if isinstance(parsed, ParsedList) and parsed.value == prediction else prediction


def _parse_labels(parsed: ParseResult) -> dict[str, str]:
    if isinstance(parsed, ParsedList):
        repairs = parsed.repairs
        if not repairs:
            return {"parse": "ok"}
        # repairs are distinct: anything but python_literal alone is a repair
        status = "ok" if repairs == ("python_literal",) else "repaired"
        return {"parse": status, "repairs": ",".join(repairs)}
    return {"parse": parsed.kind}


def _error_kinds(parsed: ParseResult, m: _StepMatch, hallucinated: bool) -> list[ErrorKind]:
    """The paper's error types visible in one example."""
    if not isinstance(parsed, ParsedList):
        return [parsed.error_kind]
    if not m.pred_ids:
        return ["not_following_instructions"]
    kinds: list[ErrorKind] = []
    unique = set(m.pred_ids)
    if len(m.pred_ids) > len(unique) or unique.difference(m.gold_ids) or m.other_items:
        kinds.append("redundant_output")
    if not m.answered.issuperset(m.gold_ids) or parsed.truncated:
        kinds.append("incomplete_output")
    if hallucinated:
        kinds.append("hallucination")
    return kinds


# One validation of plain dicts (parts as {hits, total}) instead of one per Part: the same
# ExampleScore, built at a fraction of the cost (this runs once per example).
_validate_example = ExampleScore.__pydantic_validator__.validate_python


def _example(data: dict[str, Any]) -> ExampleScore:
    result: ExampleScore = _validate_example(data)
    return result


def _labels(parsed: ParseResult, kinds: list[ErrorKind]) -> dict[str, str]:
    labels = _parse_labels(parsed)
    if kinds:
        labels["error_kinds"] = ",".join(kinds)
    return labels


def _toolset_names(inputs: dict[str, Any]) -> set[str] | None:
    toolset = inputs.get("toolset")
    if not isinstance(toolset, list):
        return None
    return {t["name"] for t in toolset if isinstance(t, dict) and isinstance(t.get("name"), str)}


def _gold(reference_outputs: dict[str, Any]) -> list[dict[str, Any]]:
    gold = reference_outputs.get("reference")
    if not isinstance(gold, list):
        raise ValueError("reference_outputs['reference'] must be the gold list of steps")
    return gold


def score_awareness(inputs: dict[str, Any], outputs: dict[str, Any],
                    reference_outputs: dict[str, Any], *,
                    task: AwarenessTask = "tool_usage_awareness",
                    parsed: ParseResult | None = None) -> ExampleScore:
    """Score one awareness answer: per-step ``int(tool)`` accuracy, global and local.

    >>> s = score_awareness({}, {"output": "[{'step': '1.1 a', 'tool': '1'}]"},
    ...                     {"reference": [{"step": "1.1 a", "tool": "1"},
    ...                                    {"step": "1.2 b", "tool": "0"}]})
    >>> s.scores["tool_usage_awareness_global"], s.scores["tool_usage_awareness_local"]
    (0.0, 50.0)
    """
    gold = _gold(reference_outputs)
    parsed = parsed if parsed is not None else parse_list(answer_of(outputs))
    pred = parsed.value if isinstance(parsed, ParsedList) else []
    m = _match(pred, gold, "tool")
    right: list[bool] = []
    hallucinated = False
    for item, g in zip(m.matched, gold, strict=True):
        if item is None:
            right.append(False)
            continue
        label = as_label(item["tool"])
        right.append(label is not None and label == as_label(g.get("tool")))
        hallucinated = hallucinated or label not in (0, 1)
    return _accuracy_score(task, parsed, m, right, hallucinated)


def score_tool_selection(inputs: dict[str, Any], outputs: dict[str, Any],
                         reference_outputs: dict[str, Any], *,
                         parsed: ParseResult | None = None) -> ExampleScore:
    """Score one tool-selection answer: exact tool-name accuracy per step, global and local.

    A predicted name absent from ``inputs["toolset"]`` is flagged as a hallucination.
    """
    gold = _gold(reference_outputs)
    parsed = parsed if parsed is not None else parse_list(answer_of(outputs))
    pred = parsed.value if isinstance(parsed, ParsedList) else []
    m = _match(pred, gold, "tool")
    names = [unescape_name(item["tool"]) if item is not None and isinstance(item["tool"], str)
             else None for item in m.matched]
    right = [n is not None and n == g.get("tool") for n, g in zip(names, gold, strict=True)]
    toolset = _toolset_names(inputs)
    hallucinated = toolset is not None and any(
        n is not None and n not in toolset for n in names)
    return _accuracy_score("tool_selection", parsed, m, right, hallucinated)


_ACCURACY_NAMES: dict[str, tuple[str, str]] = {}


def _accuracy_score(task: str, parsed: ParseResult, m: _StepMatch, right: list[bool],
                    hallucinated: bool) -> ExampleScore:
    names = _ACCURACY_NAMES.get(task)
    if names is None:
        names = _ACCURACY_NAMES.setdefault(task, (f"{task}_global", f"{task}_local"))
    global_name, local_name = names
    n, hits = len(right), sum(right)
    ok = isinstance(parsed, ParsedList)
    kinds = _error_kinds(parsed, m, hallucinated)
    comment = f"{hits}/{n} steps right"
    if hits != n:
        wrong = [sid for sid, good in zip(m.gold_ids, right, strict=True) if not good]
        comment += f"; wrong or missing: {', '.join(wrong)}"
    if not ok:
        comment += f" (unreadable answer: {parsed.kind})"  # type: ignore[union-attr]
    every = hits == n
    return _example({
        "scores": {global_name: 100.0 * every, local_name: 100.0 * hits / n if n else 100.0,
                   JSON_FORMAT: 100.0 * ok},
        "parts": {global_name: {"hits": float(every), "total": 1.0},
                  local_name: {"hits": float(hits), "total": float(n)},
                  JSON_FORMAT: {"hits": float(ok), "total": 1.0}},
        "comments": {local_name: comment},
        "labels": _labels(parsed, kinds),
    })


def score_tool_usage(inputs: dict[str, Any], outputs: dict[str, Any],
                     reference_outputs: dict[str, Any], *,
                     parsed: ParseResult | None = None) -> ExampleScore:
    """Score one tool-usage answer: key-value Levenshtein similarity per gold step (local).

    Argument names absent from the called tool's skeleton in ``inputs["toolset"]`` (or from the
    gold keys when no toolset is given) are flagged as hallucinations.

    >>> gold = {"reference": [{"step": "1.2 w", "tool": "file_write",
    ...                        "param": {"file_path": "a.txt", "content": "hi"}}]}
    >>> answer = "[{'step': '1.2 w', 'tool': 'file_write', 'param': {'file_path': 'a.txt'}}]"
    >>> score_tool_usage({}, {"output": answer}, gold).scores["tool_usage"]
    50.0
    """
    gold = _gold(reference_outputs)
    parsed = parsed if parsed is not None else parse_list(answer_of(outputs))
    pred = parsed.value if isinstance(parsed, ParsedList) else []
    m = _match(pred, gold, "param")
    # step_usage_score() per gold step, keeping each step's unescaped argument names for the
    # hallucination check.
    step_scores: list[float] = []
    keys: list[dict[str, Any] | None] = []
    for item, g in zip(m.matched, gold, strict=True):
        param = None if item is None else item.get("param")
        if not isinstance(param, dict):
            step_scores.append(0.0)
            keys.append(None)
            continue
        values = _unescaped(param)
        step_scores.append(_param_score(values, param, g))
        keys.append(values)
    n = len(step_scores)
    ok = isinstance(parsed, ParsedList)
    kinds = _error_kinds(parsed, m, _usage_hallucinated(inputs, m.matched, keys, gold))
    detail = ", ".join(f"{sid}={100 * s:.0f}"
                       for sid, s in zip(m.gold_ids, step_scores, strict=True))
    total = exact_sum(step_scores)
    return _example({
        "scores": {"tool_usage": 100.0 * total / n if n else 100.0, JSON_FORMAT: 100.0 * ok},
        "parts": {"tool_usage": {"hits": float(total), "total": float(n)},
                  JSON_FORMAT: {"hits": float(ok), "total": 1.0}},
        "comments": {"tool_usage": f"per step: {detail}" if detail else "no gold step"},
        "labels": _labels(parsed, kinds),
    })


def _tool_arguments(inputs: dict[str, Any]) -> dict[str, set[str]]:
    """Tool name -> its argument names, from ``inputs["toolset"]`` (skeletons)."""
    toolset = inputs.get("toolset")
    args_of: dict[str, set[str]] = {}
    if isinstance(toolset, list):
        for tool in toolset:
            try:
                args_of[tool["name"]] = set(tool["arguments"]["properties"])
            except (KeyError, TypeError):
                continue
    return args_of


def _usage_hallucinated(inputs: dict[str, Any], matched: list[dict[str, Any] | None],
                        keys: list[dict[str, Any] | None], gold: list[dict[str, Any]]) -> bool:
    """Whether a matched step uses an argument its tool lacks, or (with a toolset) a tool
    absent from it; ``keys``: per step, the unescaped argument names (None: no dict param)."""
    args_of: dict[str, set[str]] | None = None  # built on first use: most answers need it
    for m, names, g in zip(matched, keys, gold, strict=True):
        if m is None or names is None:
            continue
        if args_of is None:
            args_of = _tool_arguments(inputs)
        allowed = args_of.get(str(g.get("tool")))
        if allowed is None:
            allowed = set(g.get("param") or {})
        if any(name not in allowed for name in names):
            return True
        if args_of and isinstance(m.get("tool"), str) and \
                unescape_name(m["tool"]) not in args_of:
            return True
    return False


# --------------------------------------------------------------------------------------------
# Aggregation and LangSmith evaluators.

def aggregate(task: KVTask, scores: Scores) -> Metrics:
    """Corpus metrics (0-100, unrounded) of a task from per-example scores, pooled.

    Global and JSON-format rates have one part per example (denominator = samples); local and
    tool usage pool over gold steps.
    """
    c = as_corpus(scores)
    return {name: c.pooled(name) for name in metric_names(task)}


ScoreFn = Callable[..., ExampleScore]


def scorer(task: KVTask) -> ScoreFn:
    """The per-example score function of a key-value task."""
    if task in ("tool_usage_awareness", "tool_creation_awareness"):
        return partial(score_awareness, task=task)
    if task == "tool_selection":
        return score_tool_selection
    return score_tool_usage


def create_kv_evaluator(*, task: KVTask, parser: ParserMode = "robust") -> tuple[
        Callable[..., list[dict[str, Any]]], Callable[..., list[dict[str, Any]]]]:
    """LangSmith row and summary evaluators for a key-value task.

    ``outputs["output"]`` is the model's raw answer; ``parser="official"`` reads it with the
    paper's post-processing (to compare with published numbers).

    Example::

        row, summary = create_kv_evaluator(task="tool_selection")
        evaluate(target, data="ultratool-en-tool_selection", evaluators=[row],
                 summary_evaluators=[summary])
    """
    base = scorer(task)
    family: OfficialFamily = "param" if task == "tool_usage" else "aware"

    def score(inputs: dict[str, Any], outputs: dict[str, Any],
              reference_outputs: dict[str, Any]) -> ExampleScore:
        parsed = parse_answer(answer_of(outputs), mode=parser, family=family)
        return base(inputs, outputs, reference_outputs, parsed=parsed)

    return langsmith_evaluators(task, score, partial(aggregate, task))


def create_awareness_evaluator(*, task: AwarenessTask, parser: ParserMode = "robust") -> tuple[
        Callable[..., list[dict[str, Any]]], Callable[..., list[dict[str, Any]]]]:
    """LangSmith row and summary evaluators for tool usage or tool creation awareness.

    Example::

        row, summary = create_awareness_evaluator(task="tool_creation_awareness")
    """
    return create_kv_evaluator(task=task, parser=parser)
