"""The parser of tool calls written as text (issue 21: the text tool-call reader).

The shapes come from what models write: Qwen2.5-Coder-1.5B on a local server answered every
AppBench request with a fenced JSON block; Hermes/Qwen templates use ``<tool_call>`` tags;
Llama 3 ``<|python_tag|>`` and ``{"name", "parameters"}``; Mistral ``[TOOL_CALLS]``. The parser
is total (never raises, never recurses into Python's limit) and linear in the text's length.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from growth import assert_linear
from hypothesis import given, settings
from hypothesis import strategies as st

from tooleval_agents.models.tool_calls.parse import (
    MAX_CALLS,
    TextCall,
    looks_like_tool_call,
    parse_tool_calls,
)

# What Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) wrote on llama-cpp-python's server, asked to carry
# out an AppBench request with all APIs bound (issue 21).
QWEN_FENCED = ('```json\n{"name": "Events__findevents", "arguments": {"city": "New York", '
               '"event_type": "Music", "date": "2019-03-09"}}\n```')


def calls(text: str, names: set[str] | None = None) -> list[tuple[str, dict[str, object]]]:
    return [(c.name, c.args) for c in parse_tool_calls(text, names)]


def test_the_fenced_json_a_small_local_model_writes_is_one_call() -> None:
    assert calls(QWEN_FENCED) == [("Events__findevents", {
        "city": "New York", "event_type": "Music", "date": "2019-03-09"})]
    assert calls("I will look this up.\n" + QWEN_FENCED + "\nThen I will book.") == \
        calls(QWEN_FENCED)
    # two blocks, and a block holding a list
    two = QWEN_FENCED + "\n" + QWEN_FENCED.replace("Events__findevents", "Weather__getweather")
    assert [n for n, _ in calls(two)] == ["Events__findevents", "Weather__getweather"]
    listed = '```json\n[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]\n```'
    assert calls(listed) == [("a", {}), ("b", {"x": 1})]


def test_hermes_qwen_tags_llama_and_mistral_styles() -> None:
    hermes = ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
              '</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>')
    assert calls(hermes) == [("get_weather", {"city": "Paris"}), ("get_time", {})]
    # an unclosed last tag (the answer was cut off after the JSON)
    assert calls('<tool_call>\n{"name": "f", "arguments": {"a": 1}}') == [("f", {"a": 1})]
    llama = ('<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; '
             '{"name": "get_time", "parameters": {"zone": "CET"}}<|eom_id|>')
    assert calls(llama) == [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET"})]
    assert calls('{"name": "get_weather", "parameters": {"city": "Oslo"}}') == \
        [("get_weather", {"city": "Oslo"})]
    assert calls('<function=get_weather>{"city": "Rome"}</function>') == \
        [("get_weather", {"city": "Rome"})]
    mistral = ('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Lyon"}, '
               '"id": "a1b2c3d4e"}]')
    [call] = parse_tool_calls(mistral)
    assert (call.name, call.args, call.id) == ("get_weather", {"city": "Lyon"}, "a1b2c3d4e")
    assert calls('[TOOL_CALLS]get_weather[ARGS]{"city": "Nice"}') == \
        [("get_weather", {"city": "Nice"})]


def test_openai_shapes_string_arguments_and_wrappers() -> None:
    openai = json.dumps({"id": "call_1", "type": "function", "function": {
        "name": "f", "arguments": json.dumps({"q": "x"})}})
    assert calls(openai) == [("f", {"q": "x"})]
    assert parse_tool_calls(openai)[0].id == "call_1"
    assert calls('{"tool_calls": [{"name": "f", "args": {"k": 2}}]}') == [("f", {"k": 2})]
    assert calls('{"function_call": {"name": "g", "arguments": "{}"}}') == [("g", {})]


def test_what_is_not_a_call() -> None:
    assert calls("The weather in Paris is sunny, 21 degrees.") == []
    assert calls('{"name": "Paris", "population": 2100000}') == []  # no arguments key
    assert calls('{"name": "John Smith", "arguments": {}}') == []  # not a tool name
    assert calls('{"name": "f", "arguments": [1, 2]}') == []  # arguments must be an object
    assert calls('{"name": "f", "arguments": "not json"}') == []
    assert calls('{"name": "f", "arguments": {"a": 1},}') == []  # broken JSON
    assert calls("") == [] and calls("{") == [] and calls('"name"') == []
    # a JSON answer that holds call-like data inside is an answer, not a call
    assert calls('{"result": {"name": "f", "arguments": {}}}') == []


def test_a_bare_name_is_a_call_only_of_a_bound_tool() -> None:
    assert calls('{"name": "open_Hotels"}') == []
    assert calls('{"name": "open_Hotels"}', {"open_Hotels"}) == [("open_Hotels", {})]
    assert calls('{"name": "open_Hotels", "city": "Paris"}', {"open_Hotels"}) == []
    # with an arguments key, any tool name is read (an unknown tool then fails as a call)
    assert calls('{"name": "no_such_tool", "arguments": {}}', {"open_Hotels"}) == \
        [("no_such_tool", {})]


def test_prose_braces_and_quotes_do_not_hide_a_call() -> None:
    assert calls('I will call {the tool}: {"name": "f", "arguments": {}} now') == [("f", {})]
    assert calls('He said "go {"name": "f", "arguments": {"a": "}"}}') == [("f", {"a": "}"})]
    # an unbalanced quote inside braces is dropped at the line's end
    assert calls('Note { "he said "hi" \n{"name": "f", "arguments": {"b": [1, {"c": "]"}]}}') \
        == [("f", {"b": [1, {"c": "]"}]})]
    # a call inside an object that never closes
    assert calls('{ outer { "name": "f", "arguments": {"x": 1} }') == [("f", {"x": 1})]


def test_calls_keep_text_order_and_their_positions() -> None:
    text = ('[TOOL_CALLS]first[ARGS]{"a": 1} and then '
            '<tool_call>{"name": "second", "arguments": {}}</tool_call>')
    found = parse_tool_calls(text)
    assert [c.name for c in found] == ["first", "second"]
    assert found[0].start < found[1].start
    assert isinstance(found[0], TextCall)


def test_looks_like_a_call_also_when_it_cannot_be_read() -> None:
    assert looks_like_tool_call(QWEN_FENCED)
    assert looks_like_tool_call('```json\n{"name": "f", "arguments": {"city": "Par')  # cut off
    assert looks_like_tool_call('[TOOL_CALLS]')
    assert not looks_like_tool_call("Sure, the trip is booked.")
    assert not looks_like_tool_call('{"name": "Paris", "population": 2100000}')


ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "open braces": lambda n: "{" * n,
    "deep lists": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "deep objects": lambda n: '{"a":' * (n // 5) + "1" + "}" * (n // 5),
    "deep named": lambda n: '{"name": ' * (n // 10) + "1" + "}" * (n // 10),
    "named, unclosed": lambda n: '{"name":' * (n // 8),
    "many small": lambda n: '{"name": 1}' * (n // 11),
    "failing late": lambda n: '{"name": ' * 15 + "[" + "1," * (n // 2) + "1]" + " x}" * 15,
    "broken strings": lambda n: ('{"name": "a\\' + "x" * 50 + "\n") * (n // 62),
    "many calls": lambda n: '{"name": "f", "arguments": {"q": 1}} ' * (n // 37),
    "backslashes": lambda n: '{"name": "' + "\\" * n,
    "named forms": lambda n: '<function=f>{"a":' * (n // 17),
    "quotes": lambda n: '{"name": ' + '"' * n,
}
"""Answers of about ``n`` characters that made a parser quadratic or recurse too deep."""


def _both(text: str) -> None:
    parse_tool_calls(text)
    looks_like_tool_call(text)


@pytest.mark.parametrize("name", ADVERSARIAL)
def test_a_100k_answer_is_parsed_in_linear_time_without_recursion_error(name: str) -> None:
    make = ADVERSARIAL[name]
    # A quadratic parser needs minutes at 100k; benchmarks/text_tool_calls.py measures the
    # real figures (well under 0.2 s each).
    assert_linear(_both, make)
    text = make(100_000)
    assert len(text) >= 90_000
    found = parse_tool_calls(text)
    assert len(found) <= MAX_CALLS
    if name == "many calls":
        assert len(found) == MAX_CALLS and found[0].args == {"q": 1}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[]"\\:,\n nameargumts0123<>_=|/')), max_size=400))
def test_the_parser_is_total(text: str) -> None:
    found = parse_tool_calls(text)
    assert all(isinstance(c.args, dict) and c.name for c in found)
    looks_like_tool_call(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True),
                          st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=8),
                                          max_size=3)), min_size=1, max_size=4),
       st.sampled_from(["fenced", "tags", "list", "bare"]))
def test_every_written_call_is_read_back(written: list[tuple[str, dict[str, object]]],
                                         style: str) -> None:
    objects = [json.dumps({"name": n, "arguments": a}) for n, a in written]
    text = {"fenced": "\n".join(f"```json\n{o}\n```" for o in objects),
            "tags": "\n".join(f"<tool_call>\n{o}\n</tool_call>" for o in objects),
            "list": "[" + ", ".join(objects) + "]",
            "bare": "Calling:\n" + "\n".join(objects)}[style]
    assert calls(text) == written
