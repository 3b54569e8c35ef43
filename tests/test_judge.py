"""The point-wise LLM judge with a scripted chat model that answers by reading its prompt."""

from __future__ import annotations

import asyncio
import json
import math
import warnings
from typing import Any

import pytest
from fake_judges import StepJudge
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from tooleval_agents import ScoringContext
from tooleval_agents.contracts import ExampleScore, Split
from tooleval_agents.evaluators.ultratool.judge.judge import (
    ajudge_plan,
    create_async_planning_judge,
    create_planning_judge,
    create_tool_creation_judge,
    judge_plan,
)
from tooleval_agents.evaluators.ultratool.judge.prompts import DIMENSIONS, JudgeTask, build_prompt
from tooleval_agents.evaluators.ultratool.judge.reading import (
    judgment_from_object,
    parse_judge_output,
)
from tooleval_agents.evaluators.ultratool.judge.scores import (
    aggregate_planning,
    aggregate_tool_creation,
    planning_example_score,
)
from tooleval_agents.registry import get_benchmark
from tooleval_agents.ultratool.benchmark import BENCHMARK as ULTRATOOL
from tooleval_agents.ultratool.records import Lang

PLAN_DIMS = [d.key for d in DIMENSIONS["planning"]]
TOOL_DIMS = [d.key for d in DIMENSIONS["tool_creation"]]
RETRY_NOTES = ("could not be used", "无法使用")


def _verdict(prompt: str) -> dict[str, Any]:
    """Scores chosen from markers in the text under review (never from call order)."""
    answer = prompt.rsplit("Plan to review", 1)[-1].rsplit("待评审的规划", 1)[-1]
    answer = answer.rsplit("Created tool", 1)[-1].rsplit("创造的工具：", 1)[-1]
    retried = any(note in prompt for note in RETRY_NOTES)
    if "CRASH" in answer:
        raise RuntimeError("upstream failure, key sk-abcdefghijklmnop123 rejected")
    if "BROKEN" in answer or ("HUGE" in answer and not retried):
        return {"score": 11, "overall": 11}
    if "HUGE" in answer:
        return {"score": 6, "overall": 6}
    if "GOOD" in answer:
        return {"score": 8, "overall": 7}
    return {"score": 2, "overall": 2}


class ScriptedJudge(BaseChatModel):
    """A chat model without tool calling: with_structured_output raises NotImplementedError."""

    prompts: list[str] = Field(default_factory=list)
    structured_calls: int = 0
    model_name: str = "scripted-judge"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        prompt = "\n".join(str(m.content) for m in messages)
        self.prompts.append(prompt)
        verdict = _verdict(prompt)
        tool = "Created tool" in prompt or "创造的工具：" in prompt
        task: JudgeTask = "tool_creation" if tool else "planning"
        dims = TOOL_DIMS if tool else PLAN_DIMS
        if kwargs.get("tools"):
            self.structured_calls += 1
            args = {d: {"reason": f"about {d}", "score": verdict["score"]} for d in dims}
            args["overall"] = {"reason": "overall", "score": verdict["overall"]}
            name = kwargs["tools"][0]["function"]["name"]
            message = AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "c"}])
        else:
            zh = "待评审的规划" in prompt or "创造的工具：" in prompt
            items = [{("理由" if zh else "Reason"): "ok",
                      (d.score_key("zh" if zh else "en")): verdict["score"]}
                     for d in DIMENSIONS[task]]
            items.append({("总分" if zh else "Overall Score"): verdict["overall"]})
            message = AIMessage(content="```json\n" + json.dumps(items, ensure_ascii=False)
                                + "\n```")
        return ChatResult(generations=[ChatGeneration(message=message)])


class ScriptedToolJudge(ScriptedJudge):
    """The same model with tool calling, so the base with_structured_output works."""

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


QUESTION = "Create Work_Tasks.txt on the desktop and write 'Meeting prep' into it."
REFERENCE = "1. Create file\n1.1 Get file information\n1.2 Write the content"


def test_valid_structured_judgment_is_parsed() -> None:
    model = ScriptedToolJudge()
    j = judge_plan(model, question=QUESTION, reference=REFERENCE,
                   prediction="1. GOOD plan\n1.1 write it")
    assert j.ok and j.error is None
    assert j.overall == 7 and j.scores == dict.fromkeys(PLAN_DIMS, 8.0)
    assert j.reasons["efficiency"] == "about efficiency"
    assert model.structured_calls == 1 and j.attempts == 1
    assert j.model == "scripted-judge" and j.raw and '"score": 8' in j.raw
    assert j.score100() == 70.0 and j.score100("accuracy") == 80.0


def test_text_fallback_when_structured_output_is_not_implemented() -> None:
    model = ScriptedJudge()
    j = judge_plan(model, question=QUESTION, reference=REFERENCE, prediction="1. GOOD plan")
    assert j.ok and j.overall == 7 and j.scores["structural_rationality"] == 8
    assert model.structured_calls == 0
    assert '"Overall Score"' in model.prompts[0]  # text mode asks for the JSON layout


def test_out_of_range_score_is_rejected_and_retried() -> None:
    for model in (ScriptedJudge(), ScriptedToolJudge()):
        j = judge_plan(model, question=QUESTION, reference=REFERENCE, prediction="1. HUGE plan")
        assert j.ok and j.overall == 6 and j.attempts == 2
        assert len(model.prompts) == 2
        assert "11 is outside 1-10" in model.prompts[1]
        assert not any(note in model.prompts[0] for note in RETRY_NOTES)


def test_persistent_failure_is_an_error_not_a_zero() -> None:
    model = ScriptedJudge()
    j = judge_plan(model, question=QUESTION, reference=REFERENCE, prediction="1. BROKEN",
                   max_retries=2)
    assert j.error is not None and "after 3 attempt(s)" in j.error
    assert j.overall is None and j.scores == {} and j.attempts == 3 and len(model.prompts) == 3
    evaluator = create_planning_judge(judge=ScriptedJudge(), max_retries=1)
    feedback = evaluator({"input": QUESTION}, {"output": "1. BROKEN"}, {"reference": REFERENCE})
    by_key = {f["key"]: f for f in feedback}
    assert by_key["judge_error"]["score"] is None
    assert "outside 1-10" in by_key["judge_error"]["comment"]
    # The error row also scores 0 on every planning key (LangSmith's mean must count it).
    scored = {k: f["score"] for k, f in by_key.items() if k != "judge_error"}
    assert scored == dict.fromkeys(["planning", *(f"planning_{d}" for d in PLAN_DIMS)], 0.0)
    assert "outside 1-10" in by_key["planning"]["comment"]
    # Corpus: the error counts 0 in the mean and is reported, not silently dropped.
    good = judge_plan(ScriptedJudge(), question=QUESTION, reference=REFERENCE,
                      prediction="1. GOOD")
    agg = aggregate_planning([planning_example_score(good), planning_example_score(j)])
    assert agg["planning"] == 35.0 and agg["planning_judge_errors"] == 1.0
    assert agg["planning_judged"] == 70.0


def test_exception_is_recorded_with_secrets_redacted() -> None:
    j = judge_plan(ScriptedToolJudge(), question=QUESTION, reference=REFERENCE,
                   prediction="1. CRASH", max_retries=1)
    # A failed call is not repeated here: provider retries belong to the model layer (one
    # retry policy), so a persistent outage costs the model's retries, not their product.
    assert j.error is not None and "RuntimeError" in j.error and j.attempts == 1
    assert "sk-abcdefghijklmnop123" not in j.error and "<redacted>" in j.error


def test_missing_plan_is_not_judged_and_counts_zero() -> None:
    model = ScriptedJudge()
    j = judge_plan(model, question=QUESTION, reference=REFERENCE, prediction="   ")
    assert j.missing_prediction and j.error is None and model.prompts == []
    assert planning_example_score(j).scores["planning"] == 0.0


def test_zh_sample_gets_zh_prompt() -> None:
    model = ScriptedJudge()
    j = judge_plan(model, question="帮我在桌面创建文件 工作任务.txt",
                   reference="1. 创建文件\n1.1 写入内容", prediction="1. GOOD 创建文件")
    assert j.lang == "zh" and j.ok and j.overall == 7
    prompt = model.prompts[0]
    assert "准确性" in prompt and "参考答案在每个维度和总分上都可以得到8分" in prompt
    assert "Accuracy" not in prompt and '"总分"' in prompt
    en = judge_plan(model, question=QUESTION, reference=REFERENCE, prediction="1. GOOD")
    assert en.lang == "en"


def test_prompt_anchors_reference_at_8_and_cuts_plan_at_1() -> None:
    langs: tuple[Lang, ...] = ("en", "zh")
    tasks: tuple[JudgeTask, ...] = ("planning", "tool_creation")
    for lang in langs:
        for task in tasks:
            prompt = build_prompt(task, lang, question="q", reference="REF", answer="ANS")
            anchor = ("the reference would score 8 on every dimension and 8 overall"
                      if lang == "en" else "参考答案在每个维度和总分上都可以得到8分")
            assert anchor in prompt and "REF" in prompt and "ANS" in prompt
    model = ScriptedJudge()
    judge_plan(model, question=QUESTION, reference=REFERENCE,
               prediction="Sure! Here is my plan:\n1. GOOD step\n1.1 next\n\nHope this helps!")
    assert "1. GOOD step\n1.1 next" in model.prompts[0]
    assert "Sure!" not in model.prompts[0] and "Hope this helps" not in model.prompts[0]


def test_evaluator_reports_every_dimension_times_ten() -> None:
    evaluator = create_planning_judge(judge=ScriptedToolJudge(), lang="en")
    feedback = evaluator({"input": QUESTION}, {"output": "1. GOOD"}, {"reference": REFERENCE})
    scores = {f["key"]: f["score"] for f in feedback}
    assert scores == {"planning": 70.0, **{f"planning_{d}": 80.0 for d in PLAN_DIMS}}


def test_async_variants() -> None:
    async def main() -> tuple[Any, Any]:
        j = await ajudge_plan(ScriptedToolJudge(), question=QUESTION, reference=REFERENCE,
                              prediction="1. HUGE")
        evaluator = create_async_planning_judge(judge=ScriptedJudge())
        fb = await evaluator({"input": QUESTION}, {"output": "1. GOOD"}, {"reference": REFERENCE})
        return j, fb

    j, feedback = asyncio.run(main())
    assert j.ok and j.overall == 6 and j.attempts == 2
    assert {f["key"]: f["score"] for f in feedback}["planning"] == 70.0


TOOL = {"name": "file_backup", "description": "Back up a file.",
        "arguments": {"type": "object", "properties": {"path": {"type": "string",
                                                                "description": "file"}}},
        "results": {"type": "object", "properties": {"ok": {"type": "boolean",
                                                            "description": "done"}}}}


def test_tool_creation_judge_counts_missing_tools_as_zero() -> None:
    model = ScriptedJudge()
    evaluator = create_tool_creation_judge(judge=model)
    reference = {"reference": [{"step": "1.2 Back up the file", "tool": TOOL},
                               {"step": "2.1 Send the report", "tool": TOOL}]}
    created = [{"step": "1.2 Back up the file", "tool": {**TOOL, "name": "GOOD_backup"}},
               {"step": "3.1 unrelated", "tool": TOOL}]
    feedback = evaluator({}, {"output": created}, reference)
    scores = {f["key"]: f["score"] for f in feedback}
    assert scores["tool_creation"] == 35.0  # (7 * 10 + 0) / 2 gold steps
    assert scores["tool_creation_richness"] == 40.0
    assert len(model.prompts) == 1 and "Back up the file" in model.prompts[0]
    assert '"Total Score"' not in model.prompts[0] and '"Overall Score"' in model.prompts[0]
    # Model text holding the list works too (Python literal, single quotes).
    text = "Here you go: " + repr(created)
    again = {f["key"]: f["score"] for f in evaluator({}, {"output": text}, reference)}
    assert again["tool_creation"] == 35.0


# --- the tolerant parser ---------------------------------------------------------------------


def test_parser_reads_official_and_loose_formats() -> None:
    official_en = ('[{"Reasoning": "fine", "Accuracy Score": 7}, {"Completeness Score": 8}, '
                   '{"Executability Score": 8}, {"Syntactic Soundness Score": 10}, '
                   '{"Structural Rationality Score": 9}, {"Efficiency Score": 8}, '
                   '{"Reasoning": "good", "Overall Score": 7},]')  # trailing comma
    j = parse_judge_output(official_en, "planning", lang="en")
    assert j.ok and j.overall == 7 and j.scores["syntactic_soundness"] == 10
    assert j.reasons == {"accuracy": "fine", "overall": "good"}
    tool_en = {"Format Compliance Score": 9, "Accuracy Score": "8", "Content Reasonableness "
               "Score": 7, "Executability Score": 7, "Richness Score": "6/10", "Total Score": 7}
    t = judgment_from_object(tool_en, "tool_creation", lang="en")
    assert t.ok and t.overall == 7 and t.scores["richness"] == 6
    lines = ("准确性分数：8\n完整性分数: 7\n可执行性分数：8\n语法健全性分数：9\n结构合理性分数：8\n"
             "高效性分数：7\n总分：8分")
    z = parse_judge_output(lines, "planning", lang="zh")
    assert z.ok and z.overall == 8 and z.scores["completeness"] == 7


def test_parser_rejects_bad_values_without_clamping() -> None:
    base = {d: 8 for d in PLAN_DIMS} | {"overall": 8}
    for bad in (0, 11, -3, "high", True, None, float("nan"), 10**400):
        j = judgment_from_object(base | {"efficiency": bad}, "planning", lang="en")
        assert j.error is not None and "efficiency" in j.error
        assert "efficiency" not in j.scores and j.overall == 8
    missing = judgment_from_object({d: 8 for d in PLAN_DIMS}, "planning", lang="en")
    assert missing.error is not None and "overall: missing" in missing.error


_DIM_KEYS = [d.score_key("en") for d in DIMENSIONS["planning"]] + \
    [d.score_key("zh") for d in DIMENSIONS["planning"]] + ["Overall Score", "总分", "overall"]
_VALUES = st.one_of(st.integers(-20, 30), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=8), st.booleans(), st.none())


def _in_range(j: Any) -> bool:
    values = [*j.scores.values(), *([j.overall] if j.overall is not None else [])]
    return all(isinstance(v, float) and math.isfinite(v) and 1 <= v <= 10 for v in values)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_parser_never_raises_on_arbitrary_text(text: str) -> None:
    for task in ("planning", "tool_creation"):
        j = parse_judge_output(text, task, lang="en")
        assert _in_range(j)
        assert j.error is not None or j.overall is not None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from([*_DIM_KEYS, "Reason", "理由", "score"]),
                                _VALUES, max_size=4), max_size=9),
       st.sampled_from(["json", "repr", "lines"]))
def test_parser_never_returns_out_of_range_scores(items: list[dict[str, Any]], form: str) -> None:
    if form == "json":
        text = json.dumps(items, ensure_ascii=False)
    elif form == "repr":
        text = repr(items)
    else:
        text = "\n".join(f"{k}: {v}" for item in items for k, v in item.items())
    j = parse_judge_output(text, "planning", lang="en")
    assert _in_range(j)
    if j.error is None:
        assert set(j.scores) == set(PLAN_DIMS) and j.overall is not None


def test_example_score_type() -> None:
    j = parse_judge_output("nothing", "planning", lang="en")
    assert isinstance(planning_example_score(j), ExampleScore)
    assert planning_example_score(j).error is not None


SMALL_TOOL = {"name": "t", "description": "d", "arguments": {"type": "object", "properties": {}},
        "results": {"type": "object", "properties": {}}}


TOOL_REF = {"reference": [{"step": "1.1 make a", "tool": SMALL_TOOL}]}


@pytest.mark.parametrize("prediction", [
    [{"step": "1.1 make a", "tool": {"name": "GOOD"}},
     {"step": "1.1 again", "tool": {"name": "x"}}],
    "[{'step': '1.1 make a', 'tool': {'name': 'GOOD'}}, {'step': '1.1', 'tool': {'name': 'x'}}]",
])
def test_runner_tool_creation_scorer_matches_the_langsmith_evaluator(prediction: Any) -> None:
    scorer = get_benchmark("ultratool").scorer(Split("ultratool", "tool_creation", "en"),
                                               context=ScoringContext(judge=StepJudge()))
    result = scorer.score({}, {"prediction": prediction}, TOOL_REF)
    assert result.scores["tool_creation"] == 90.0  # the first 1.1 item (GOOD), official rule
    row = create_tool_creation_judge(judge=StepJudge())({}, {"prediction": prediction}, TOOL_REF)
    assert {f["key"]: f["score"] for f in row}["tool_creation"] == 90.0


def test_planning_error_rows_count_zero_in_langsmith_means() -> None:
    evaluator = create_planning_judge(judge=StepJudge(), lang="en", max_retries=0)
    ref = {"reference": "1. a\n1.1 b"}
    rows = [evaluator({"input": "q"}, {"output": plan}, ref)
            for plan in ("1. GOOD a", "1. BROKEN a")]
    planning = [next(f["score"] for f in r if f["key"] == "planning") for r in rows]
    assert planning == [90.0, 0.0]
    error = next(f for f in rows[1] if f["key"] == "judge_error")
    assert error["score"] is None and "outside 1-10" in error["comment"]
    assert "outside 1-10" in next(f["comment"] for f in rows[1] if f["key"] == "planning")
    judged = [judge_plan(StepJudge(), question="q", reference=ref["reference"], prediction=p,
                         max_retries=0) for p in ("1. GOOD a", "1. BROKEN a")]
    aggregate = aggregate_planning([planning_example_score(j) for j in judged])
    assert sum(planning) / 2 == aggregate["planning"] == 45.0


def test_tool_creation_rows_carry_hits_and_steps_for_pooling() -> None:
    evaluator = create_tool_creation_judge(judge=StepJudge(), max_retries=0)
    refs = [{"reference": [{"step": "1.1 make a", "tool": SMALL_TOOL},
                           {"step": "1.2 make b", "tool": SMALL_TOOL}]},
            {"reference": [{"step": "2.1 make c", "tool": SMALL_TOOL}]},
            {"reference": [{"step": "3.1 make d", "tool": SMALL_TOOL}]}]
    outputs = [[{"step": "1.1", "tool": {"name": "GOOD"}}], [{"step": "2.1", "tool": {"a": 1}}],
               [{"step": "3.1", "tool": {"name": "BROKEN"}}]]
    rows = [{f["key"]: f for f in evaluator({}, o, r)} for o, r in zip(outputs, refs, strict=True)]
    hits = sum(r["tool_creation_hits"]["score"] for r in rows)
    steps = sum(r["tool_creation_steps"]["score"] for r in rows)
    # Steps: 0.9 (GOOD) + 0 (no tool for 1.2) + 0.3 + 0 (judge error), over 4 gold steps.
    assert steps == 4 and 100 * hits / steps == pytest.approx(100 * 1.2 / 4)
    assert rows[2]["judge_error"]["score"] is None and rows[2]["tool_creation"]["score"] == 0.0
    from tooleval_agents.evaluators.ultratool.judge.judge import (
        _example_tools,
        _judge_item,
        _runnable,
        tool_creation_example_score,
    )

    runnable, structured = _runnable(StepJudge(), "tool_creation", True)
    examples = [tool_creation_example_score([_judge_item(StepJudge(), runnable, i, 0) for i in
                                             _example_tools({}, o, r, None, structured)])
                for o, r in zip(outputs, refs, strict=True)]
    assert aggregate_tool_creation(examples)["tool_creation"] == pytest.approx(100 * hits / steps)


def test_judge_parser_does_not_warn_on_odd_literals() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        judgment = parse_judge_output(r"{'Accuracy Score': '\d'}", "planning", lang="en")
    assert judgment.error is not None
    assert [str(w.message) for w in caught] == []


def test_planning_score_keeps_the_judge_labels() -> None:
    scorer = ULTRATOOL.scorer(ULTRATOOL.split("planning", "en"), context=ScoringContext(
        judge=FakeListChatModel(responses=["no scores"])))
    result = scorer.score({"input": "q"}, {"prediction": "1. Search\n2. Book"},
                          {"reference": "1. Search\n2. Book"})
    assert result.labels.get("judge") == "error" and result.error is not None
