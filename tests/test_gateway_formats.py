"""The gateway's three wire formats read as the model is asked (each module's ``parse``, with
no server): the conversation as LangChain messages, the tools bound as OpenAI function tools,
what a route does not apply recorded rather than refused, what the model is not shown
counted; and a failure of the run's model answered as the agent's provider would answer it
(:func:`tooleval_agents.gateway.model.failure`)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from tooleval_agents.gateway import chat_completions, messages, responses
from tooleval_agents.gateway.model import STATUS_OF_KIND, failure

WEATHER = {"name": "getweather", "description": "The weather of a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}


def test_chat_completions_reads_a_tool_round_and_records_what_it_does_not_apply() -> None:
    request = chat_completions.parse({
        "model": "m", "temperature": 0.2, "store": False, "metadata": {"run": "x"},
        "tools": [{"type": "function", "function": WEATHER}], "tool_choice": "auto",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "c1", "type": "function",
                "function": {"name": "getweather", "arguments": '{"city": "Paris"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]})
    kinds = [type(m) for m in request.messages]
    assert kinds == [SystemMessage, HumanMessage, AIMessage, ToolMessage]
    call = request.messages[2]
    assert isinstance(call, AIMessage)
    assert call.tool_calls[0]["name"] == "getweather"
    assert call.tool_calls[0]["args"] == {"city": "Paris"}
    assert [t["function"]["name"] for t in request.tools] == ["getweather"]
    assert {"temperature", "store", "metadata"} <= set(request.unused)


def test_messages_drops_thinking_and_counts_it() -> None:
    request = messages.parse({
        "model": "m", "max_tokens": 100, "thinking": {"type": "enabled", "budget_tokens": 10},
        "system": [{"type": "text", "text": "Be brief."}],
        "tools": [{"name": "getweather", "description": "The weather of a city.",
                   "input_schema": WEATHER["parameters"]}],
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "a city", "signature": "s"},
                {"type": "tool_use", "id": "t1", "name": "getweather",
                 "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]}]})
    assert request.dropped.get("thinking") == 1
    assert "thinking" in request.unused
    assert any(isinstance(m, SystemMessage) for m in request.messages)
    call = next(m for m in request.messages if isinstance(m, AIMessage))
    assert call.tool_calls[0]["args"] == {"city": "Paris"}
    assert any(isinstance(m, ToolMessage) and "sunny" in str(m.content)
               for m in request.messages)


def test_responses_binds_a_namespace_tool_under_its_namespace() -> None:
    request = responses.parse({
        "model": "m", "store": False, "reasoning": {"effort": "low"}, "include": [],
        "input": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "namespace", "name": "bench", "tools": [
            {"type": "function", "name": "getweather", "description": "The weather.",
             "parameters": WEATHER["parameters"]}]}]})
    assert [t["function"]["name"] for t in request.tools] == ["bench__getweather"]
    assert {"reasoning", "include"} <= set(request.unused)


def test_a_failure_of_the_run_model_is_the_providers_answer() -> None:
    class RateLimitError(Exception):
        pass

    assert failure(RateLimitError("slow down")).status == STATUS_OF_KIND["rate_limit"][1] == 429
    assert failure(TimeoutError()).status == 504
    own = failure(ValueError("the model's own"))
    assert (own.kind, own.status) == ("server_error", 500)
