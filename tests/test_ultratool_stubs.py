"""UltraTool skeletons as simulated tools, and plan execution with reference resolution."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from tooleval_agents.ultratool.calls import parse_call
from tooleval_agents.ultratool.loaders import load_raw, load_task
from tooleval_agents.ultratool.records import Lang, RawSample, ToolCall, ToolSkeleton
from tooleval_agents.ultratool.skeletons import ToolCallError, simulate_result, validate_args
from tooleval_agents.ultratool.stubs import (
    execute_plan,
    plan_items,
    step_annotations,
    validate_skeleton,
)
from tooleval_agents.ultratool.tools import skeleton_tool

RATE = ToolSkeleton.model_validate({
    "name": "exchange_rate_query",
    "description": "Query the exchange rate between two currencies.",
    "arguments": {"type": "object", "properties": {
        "from_currency": {"type": "string", "description": "Source currency"},
        "to_currency": {"type": "string", "enum": ["CNY", "USD", "GBP"]},
    }},
    "results": {"type": "object", "properties": {
        "exchange_rate": {"type": "number", "description": "The current exchange rate"},
    }},
})
CONVERT = ToolSkeleton.model_validate({
    "name": "currency_conversion",
    "description": "Convert an amount.",
    "arguments": {"type": "object", "properties": {
        "amount": {"type": "integer"},
        "rate": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "confirm": {"type": "boolean"},
        "options": {"type": "object"},
        "note": {},
    }},
    "results": {"type": "object", "properties": {
        "converted_amount": {"type": "number"},
        "receipt_id": {"type": "string"},
        "count": {"type": "integer"},
        "ok": {"type": "boolean"},
        "lines": {"type": "array", "items": {"type": "integer"}},
        "detail": {"type": "object", "properties": {"fee": {"type": "number"},
                                                    "currency": {"type": "string"}}},
    }},
})


def call(text: str) -> ToolCall:
    parsed = parse_call(text)
    assert parsed is not None
    return parsed


# --- the StructuredTool ------------------------------------------------------------------------

def test_tool_invoke_returns_result_shaped_by_schema() -> None:
    tool = skeleton_tool(CONVERT)
    out = tool.invoke({"amount": 5000, "rate": 8.9})
    assert set(out) == set(CONVERT.results.properties)
    assert isinstance(out["converted_amount"], float)
    assert out["receipt_id"].startswith("currency_conversion.receipt_id#")
    assert isinstance(out["count"], int) and out["ok"] is True
    assert len(out["lines"]) == 2 and all(isinstance(x, int) for x in out["lines"])
    assert set(out["detail"]) == {"fee", "currency"}
    assert isinstance(out["detail"]["currency"], str)


def test_tool_is_deterministic_in_seed_name_and_arguments() -> None:
    tool = skeleton_tool(CONVERT)
    a = tool.invoke({"amount": 5000})
    assert tool.invoke({"amount": 5000}) == a
    assert skeleton_tool(CONVERT).invoke({"amount": "5000"}) == a  # same arguments once coerced
    assert tool.invoke({"amount": 5001}) != a
    assert skeleton_tool(CONVERT, seed=1).invoke({"amount": 5000}) != a
    assert simulate_result(CONVERT, {"amount": 5000}, seed="x") == \
        simulate_result(CONVERT, {"amount": 5000}, seed="x")


def test_unknown_argument_rejected_with_clear_message() -> None:
    msg = skeleton_tool(RATE).invoke({"from_currency": "GBP", "currency": "CNY"})
    assert msg.startswith("Error: invalid call to exchange_rate_query")
    assert "unknown argument 'currency'" in msg and "from_currency, to_currency" in msg
    with pytest.raises(ToolCallError) as err:
        validate_args(RATE, {"currency": "CNY"})
    assert err.value.tool == "exchange_rate_query" and len(err.value.problems) == 1


def test_wrong_type_rejected_naming_argument_and_type() -> None:
    msg = skeleton_tool(CONVERT).invoke({"amount": "five thousand"})
    assert "argument 'amount' expects integer" in msg and "'five thousand'" in msg
    msg = skeleton_tool(CONVERT).invoke({"tags": "a, b"})
    assert "argument 'tags' expects array" in msg
    msg = skeleton_tool(RATE).invoke({"to_currency": "EUR"})
    assert "expects one of 'CNY', 'USD', 'GBP'" in msg


def test_tool_call_input_gives_error_tool_message() -> None:
    out = skeleton_tool(RATE).invoke(
        {"name": "exchange_rate_query", "args": {"bad": 1}, "id": "c1", "type": "tool_call"})
    assert isinstance(out, ToolMessage)
    assert out.status == "error" and "unknown argument 'bad'" in str(out.content)


def test_text_coerced_to_declared_type() -> None:
    got = validate_args(CONVERT, {"amount": "5000", "rate": "8.9", "tags": "['a', 'b']",
                                  "confirm": "True", "options": "{'fast': True}", "note": "x"})
    assert got == {"amount": 5000, "rate": 8.9, "tags": ["a", "b"], "confirm": True,
                   "options": {"fast": True}, "note": "x"}
    with pytest.raises(ToolCallError, match="'amount' expects integer"):
        validate_args(CONVERT, {"amount": "[1, 2]"})
    with pytest.raises(ToolCallError, match="'amount' expects integer"):
        validate_args(CONVERT, {"amount": "2.5"})
    # Never evaluated as code.
    with pytest.raises(ToolCallError):
        validate_args(CONVERT, {"amount": "__import__('os').getpid()"})


def test_enum_matches_case_insensitively_in_its_own_spelling() -> None:
    assert validate_args(RATE, {"to_currency": "usd"}) == {"to_currency": "USD"}


def test_required_list_respected_when_present() -> None:
    data: dict[str, Any] = RATE.model_dump(mode="json")
    data["arguments"]["required"] = ["from_currency"]
    strict = ToolSkeleton.model_validate(data)
    with pytest.raises(ToolCallError, match="missing required argument 'from_currency'"):
        validate_args(strict, {"to_currency": "USD"})
    assert validate_args(RATE, {}) == {}  # upstream has no required list: all optional


def test_args_schema_shown_to_models() -> None:
    params = convert_to_openai_tool(skeleton_tool(RATE))["function"]["parameters"]
    assert params["properties"]["to_currency"]["enum"] == ["CNY", "USD", "GBP"]
    assert params["properties"]["from_currency"] == {"type": "string",
                                                     "description": "Source currency"}
    assert "required" not in params


def test_argument_names_that_clash_with_pydantic_still_work() -> None:
    odd = ToolSkeleton.model_validate({
        "name": "odd", "description": "d", "results": {"properties": {}},
        "arguments": {"properties": {"schema": {"type": "integer"},
                                     "model_config": {"type": "string"}}}})
    assert validate_args(odd, {"schema": "3", "model_config": "x"}) == {"schema": 3,
                                                                         "model_config": "x"}
    assert skeleton_tool(odd).invoke({"schema": 3}) == {}


# --- skeleton validation -----------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gold_skeletons_are_valid(shared_data: Path, lang: Lang) -> None:
    tools = [t for r in load_raw(shared_data, lang) for t in r.tools]
    created = [c.tool for r in load_task(shared_data, "tool_creation", lang)
               for c in r.reference]
    assert len(created) == 1544  # notes: 1544 asked steps
    assert [p for t in tools + created for p in validate_skeleton(t)] == []


def test_broken_skeletons_reported() -> None:
    assert validate_skeleton("def f(): pass") == ["a tool skeleton must be an object, got str"]
    problems = validate_skeleton({"name": "os.system('rm -rf /')", "description": " ",
                                  "arguments": {"type": "object", "properties": {
                                      "x": {"type": "float"}, "my arg": {"type": "string"},
                                      "y": "string"}},
                                  "results": []})
    assert any(p.startswith("name must be an identifier") for p in problems)
    assert "description must be a non-empty string" in problems
    assert any("arguments.x: unknown type 'float'" in p for p in problems)
    assert "arguments.y must be an object" in problems
    assert "argument name 'my arg' is not a keyword name" in problems
    assert "results must be an object schema, got list" in problems
    assert validate_skeleton(RATE) == []


# --- plan execution ----------------------------------------------------------------------------

def test_step_annotations() -> None:
    assert step_annotations("1.1 Get info (Account ID: U1, Amount: 500 yuan, Time: now)") == [
        ("Account ID", "U1"), ("Amount", "500 yuan"), ("Time", "now")]
    zh = "1.3 获取创建的交易ID（交易ID：创建的交易ID）"
    assert step_annotations(zh) == [("交易ID", "创建的交易ID")]
    assert step_annotations("2. Search for flights") == []


def test_reference_resolves_by_name_to_the_matching_output() -> None:
    trace = execute_plan([
        ("1 Query the rate", call("exchange_rate_query(from_currency='GBP', to_currency='CNY')")),
        ("2 Convert", call("currency_conversion(amount=5000)")),
        ("3 Convert again", call("currency_conversion(amount=100, rate=<current exchange rate>)")),
    ], [RATE, CONVERT])
    assert trace.valid_calls == 3
    (res,) = trace.calls[2].resolved_references
    # Not the latest call: the one whose result is named like the reference.
    assert (res.step, res.output, res.by) == ("1", "exchange_rate", "name")
    assert trace.calls[2].args["rate"] == trace.calls[0].result["exchange_rate"]  # type: ignore[index]


def test_reference_resolves_to_an_earlier_steps_annotation() -> None:
    trace = execute_plan([
        ("1.1 Get the amount (Transfer amount: the amount the user names)", None),
        ("1.2 Convert", call("currency_conversion(amount=<the amount the user names>)")),
    ], [CONVERT])
    (res,) = trace.calls[0].resolved_references
    assert (res.step, res.output, res.by) == ("1.1", "Transfer amount", "name")
    assert trace.calls[0].valid  # a reference is accepted for an integer argument


def test_reference_without_a_named_output_falls_back_to_position() -> None:
    trace = execute_plan([
        ("1 Query", call("exchange_rate_query(to_currency='CNY')")),
        ("2 Convert", call("currency_conversion(note=<user's contact information>)")),
    ], [RATE, CONVERT])
    (res,) = trace.calls[1].resolved_references
    assert res.by == "position" and res.step == "1"
    assert trace.resolved == 1 and trace.resolved_by_name == 0


def test_reference_with_nothing_before_is_unresolved() -> None:
    trace = execute_plan([("1 Convert", call("currency_conversion(rate=<exchange rate>)"))],
                         [CONVERT])
    assert trace.calls[0].unresolved_references == ["<exchange rate>"]
    assert trace.resolved == 0 and trace.references == 1
    # A failed call produces nothing to refer to.
    trace = execute_plan([("1 Query", call("exchange_rate_query(currency='CNY')")),
                          ("2 Convert", call("currency_conversion(rate=<exchange rate>)"))],
                         [RATE, CONVERT])
    assert not trace.calls[0].valid
    assert trace.calls[1].unresolved_references == ["<exchange rate>"]


def test_reference_inside_text_and_lists_is_substituted() -> None:
    trace = execute_plan([
        ("1 Query", call("exchange_rate_query(to_currency='CNY')")),
        ("2 Convert", call("currency_conversion(tags=['<exchange rate>', 'x'], "
                           "note='at <exchange rate> today')")),
    ], [RATE, CONVERT])
    rate = trace.calls[0].result["exchange_rate"]  # type: ignore[index]
    assert trace.calls[1].args == {"tags": [str(rate), "x"], "note": f"at {rate} today"}


def test_plan_errors_and_warnings() -> None:
    trace = execute_plan([
        ("1", call("unknown_tool(a='1')")),
        ("2", call("currency_conversion(amount=[1, 2])")),
        ("3", call("currency_conversion(amount='obtained amount')")),
        ("4", "currency_conversion(5000"),
        ("5", call("currency_conversion('5000')")),
    ], [CONVERT])
    errors = [c.error for c in trace.calls]
    assert errors[0] is not None and "unknown tool 'unknown_tool'" in errors[0]
    assert errors[1] is not None and "'amount' expects integer" in errors[1]
    # Free text for a typed argument stands for a value to fill in: it runs, with a warning.
    assert errors[2] is None and "kept as a placeholder" in trace.calls[2].warnings[0]
    assert trace.calls[2].args["amount"] == "obtained amount"
    assert errors[3] is not None and errors[3].startswith("not a call")
    assert errors[4] is not None and "must be given as name=value" in errors[4]
    assert (trace.valid_calls, trace.strict_calls) == (1, 0)


def test_execution_is_deterministic(shared_data: Path) -> None:
    sample = load_raw(shared_data, "en")[214]
    a = execute_plan(plan_items(sample.plan), sample.tools)
    b = execute_plan(plan_items(sample.plan), sample.tools)
    assert a.model_dump() == b.model_dump()
    other = execute_plan(plan_items(sample.plan), sample.tools, seed=7)
    assert a.model_dump() != other.model_dump()


@pytest.fixture(scope="module", params=["en", "zh"])
def gold(request: pytest.FixtureRequest, shared_data: Path) -> tuple[str, list[RawSample]]:
    return request.param, load_raw(shared_data, request.param)


def test_gold_plans_execute(gold: tuple[str, list[RawSample]]) -> None:
    """Every gold call but one is valid and every reference resolves; most resolve by name.

    The one invalid call is #348 ``set_reminder("event"='Running', reminder_date='tomorrow')``:
    ``event`` is no argument of the sample's ``set_reminder`` skeleton (upstream's tool_usage
    reference drops it: ``{'reminder_date': 'tomorrow'}``); the parser keeps it as unread text
    instead of dropping it, so the simulated tool rejects the call.
    Measured: en 2380/2381 valid (2315 strict), 328/328 references (308 by name); zh 2380/2381
    (2326 strict), 327/327 (305 by name).
    """
    _, samples = gold
    traces = [execute_plan(plan_items(s.plan), s.tools) for s in samples]
    calls = sum(len(t.calls) for t in traces)
    assert calls == 2381  # notes: 2381 leaf tool-call steps (tool-usage awareness positives)
    invalid = [(i, c.tool) for i, t in enumerate(traces) for c in t.calls if c.error]
    assert invalid == [(348, "set_reminder")]
    assert sum(t.valid_calls for t in traces) == calls - 1
    refs = sum(t.references for t in traces)
    assert refs > 300  # ~one in three samples has nested calls
    assert sum(t.resolved for t in traces) == refs
    assert sum(t.resolved_by_name for t in traces) >= 0.9 * refs
    assert sum(t.strict_calls for t in traces) >= 0.95 * calls


def test_name_rule_does_not_match_unrelated_outputs(gold: tuple[str, list[RawSample]]) -> None:
    """References run after another sample's plan rarely resolve by name (measured: 1% en,
    4% zh), so a name match carries signal."""
    _, samples = gold
    refs = by_name = 0
    for i, s in enumerate(samples):
        other = samples[(i + 500) % len(samples)]
        for step in s.plan:
            if step.call is not None and step.call.references:
                trace = execute_plan([*plan_items(other.plan), (step.step, step.call)],
                                     other.tools + s.tools)
                last = trace.calls[-1]
                refs += len(last.resolved_references) + len(last.unresolved_references)
                by_name += sum(r.by == "name" for r in last.resolved_references)
    assert refs > 300 and by_name < 0.1 * refs


def test_ultratool_text_before_the_first_name_is_kept() -> None:
    call = parse_call("f('positional', a='2')")
    assert call is not None and call.args == {"a": "2"} and call.unparsed == "'positional'"
    quoted = parse_call("set_reminder(\"event\"='Running', reminder_date='tomorrow')",
                        {"event", "reminder_date"})
    assert quoted is not None and quoted.unparsed is None
    assert quoted.args == {"event": "Running", "reminder_date": "tomorrow"}
    undeclared = parse_call("set_reminder(\"event\"='Running', reminder_date='tomorrow')",
                            {"reminder_date"})
    assert undeclared is not None and undeclared.args == {"reminder_date": "tomorrow"}
    assert undeclared.unparsed == "\"event\"='Running'"


def test_simulated_tool_rejects_a_call_with_unread_text() -> None:
    tool = ToolSkeleton.model_validate({
        "name": "f", "description": "d",
        "arguments": {"properties": {"a": {"type": "string"}}},
        "results": {"properties": {"ok": {"type": "boolean"}}}})
    trace = execute_plan([("1 Do", parse_call("f('positional', a='2')", {"a"})),
                          ("2 Do", parse_call("f(a='2')", {"a"}))], [tool])
    bad, good = trace.calls
    assert bad.error is not None and "'positional'" in bad.error and bad.result is None
    assert good.error is None
    assert trace.valid_calls == 1
