"""Agents as LangChain users build them (issue: native tool calling, bring your own agent):
AppBench APIs as tools, the ``tools`` / ``tools_hierarchical`` strategies, ``--agent``, the
offline models as tool-calling agents, and a real OpenAI-compatible tool-calling exchange."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from fake_langsmith import loopback_only
from fake_openai import ChatRequest, FakeOpenAI
from helpers import run as offline_run
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from typer.testing import CliRunner

from tooleval_agents.agents import AgentLoadError, agent_label, load_agent, trajectory
from tooleval_agents.appbench.catalog import load_catalog
from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.tools import (
    api_tools,
    calls_from_trajectory,
    open_tools,
    split_tool_name,
)
from tooleval_agents.cli import app
from tooleval_agents.graphs.appbench.tools import (
    ToolsHierarchical,
    opened_apps,
    read_trajectory,
    tool_plan,
)
from tooleval_agents.graphs.tool_agent import agent_node, agent_outputs, react_agent
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.reference_tools import ToolPlan, corrupt_plan, next_turn
from tooleval_agents.results.rundir import RunDir

PROVIDER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
AGENT_FILE = '''\
from langchain.agents import create_agent


def build(model, tools):
    return create_agent(model, tools, system_prompt="Use the tools, then answer briefly.")
'''


run = partial(offline_run, "appbench")


# ----------------------------------------------------------------------------- the tools

def test_every_api_is_a_tool_with_a_provider_valid_name_and_the_catalog_schema() -> None:
    catalog = load_catalog()
    tools = api_tools(catalog)
    assert len(tools) == sum(len(a.apis) for a in catalog.apps.values()) == 33
    assert len(open_tools(catalog)) == 15
    for tool in [*tools, *open_tools(catalog)]:
        assert PROVIDER_NAME.match(tool.name), tool.name
    reserve = next(t for t in tools if t.name == "Restaurants__reserverestaurant")
    schema = reserve.tool_call_schema if isinstance(reserve.tool_call_schema, dict) \
        else reserve.tool_call_schema.model_json_schema()
    spec = catalog.api("Restaurants", "reserverestaurant")
    assert spec is not None
    assert set(schema["required"]) == set(spec.required)
    assert set(schema["properties"]) == set(spec.required) | set(spec.optional)
    events = next(t for t in tools if t.name == "Events__findevents")
    ev_schema = events.args_schema
    assert isinstance(ev_schema, dict)
    assert ev_schema["properties"]["event_type"]["enum"] == ["Music", "Theater"]


def test_a_tool_checks_its_arguments_and_echoes_them_in_its_answer() -> None:
    tools = {t.name: t for t in api_tools(load_catalog())}
    find = tools["Restaurants__findrestaurants"]
    answer = json.loads(find.invoke({"location": "San Francisco", "category": "Korean"}))
    assert answer["location"] == "San Francisco"  # a result slot named like an argument
    assert answer["restaurant_name"].startswith("findrestaurants.restaurant_name#")
    assert answer == json.loads(find.invoke({"category": "Korean",
                                             "location": "San Francisco"}))
    seats = json.loads(tools["Rents__getride"].invoke(
        {"destination": "SFO", "number_of_seats": 2, "ride_type": "Pool"}))
    assert seats["number_of_seats"] == "2"  # numbers are written as text
    # A failure is the tool's answer, an error ToolMessage any agent can act on.
    wrong = tools["Events__findevents"].invoke(
        {"type": "tool_call", "id": "1", "name": "Events__findevents",
         "args": {"city": "Paris", "event_type": "Sports"}})
    assert wrong.status == "error"
    assert re.match(r"Error: .*'event_type' must be one of Music, Theater", wrong.content)
    assert re.search(r"unknown argument 'origin'.*missing required",
                     tools["Buses__findbus"].invoke({"origin": "Paris"}))


def test_a_dependency_is_a_value_an_earlier_turn_returned_under_the_same_name() -> None:
    find = json.dumps({"restaurant_name": "Baan", "location": "SF"})
    msgs = [HumanMessage("book"),
            AIMessage("", tool_calls=[
                {"name": "Restaurants__findrestaurants", "args": {"location": "SF"}, "id": "a"},
                {"name": "Weather__getweather", "args": {"city": "Baan"}, "id": "b"}]),
            ToolMessage(find, tool_call_id="a"), ToolMessage("{}", tool_call_id="b"),
            AIMessage("", tool_calls=[
                {"name": "Restaurants__reserverestaurant", "id": "c",
                 "args": {"restaurant_name": "Baan", "location": "SF", "time": "13:30",
                          "name": "Baan"}}]),
            ToolMessage("boom", tool_call_id="c", status="error"), AIMessage("done")]
    calls = calls_from_trajectory(trajectory(msgs), load_catalog())
    # Same turn: no dependency (the weather call could not see the search result).
    assert calls[1].literal_args == {"city": "Baan"}
    reserve = calls[2]
    assert reserve.dependent_args == {"restaurant_name": "restaurant_name", "location": "location"}
    # Another name with the same value stays a literal (the gold always writes #k=k).
    assert reserve.literal_args == {"time": "13:30", "name": "Baan"}
    from tooleval_agents.evaluators.appbench.parse import parse_answer

    reparsed = parse_answer("\n".join(c.raw for c in calls)).calls
    assert [(c.api, c.literal_args, c.dependent_args) for c in reparsed] == \
        [(c.api, c.literal_args, c.dependent_args) for c in calls]
    assert split_tool_name("open_Hotels") == (None, "open_Hotels")


# ----------------------------------------------------------------------------- the agent loop

def test_tool_failures_go_back_to_the_model_and_hierarchy_refuses_unopened_apps(
        samples: Path, tmp_path: Path) -> None:
    # A scripted model that calls an API before opening its app, then an unknown tool with a
    # bad argument, then opens the app and calls it properly.
    turns = iter([
        AIMessage("", tool_calls=[{"name": "Weather__getweather", "args": {"city": "Oslo"},
                                   "id": "1"}]),
        AIMessage("", tool_calls=[{"name": "Nope__x", "args": {}, "id": "2"},
                                  {"name": "open_Weather", "args": {}, "id": "3"}]),
        AIMessage("", tool_calls=[{"name": "Weather__getweather", "args": {"town": "Oslo"},
                                   "id": "4"}]),
        AIMessage("", tool_calls=[{"name": "Weather__getweather", "args": {"city": "Oslo"},
                                   "id": "5"}]),
        AIMessage("It is sunny."),
    ])
    model = ScriptedChatModel(rules=[(".", lambda _: next(turns))])
    strategy = ToolsHierarchical()
    from tooleval_agents.contracts import Split, StrategyContext

    ctx = StrategyContext(model=model, split=Split("appbench", "plan", "ss"))
    graph = strategy.build(ctx)
    state = asyncio.run(graph.ainvoke({"inputs": {"input": "What is the weather in Oslo?"}}))
    records = [r for r in state["trace"] if r["kind"] == "tool_call"]
    assert [r["error"] for r in records] == [True, True, False, True, False]
    assert "call open_Weather first" in records[0]["output"]
    assert "no tool named 'Nope__x'" in records[1]["output"]
    assert "unknown argument 'town'" in records[3]["output"]
    assert state["trace"][-1] == {"kind": "agent", "turns": 5, "tool_calls": 5,
                                  "tool_errors": 3, "structured_calls": 5, "text_calls": 0,
                                  "unread_text_calls": 0}
    # Every API call is in the prediction, failed ones included (they are what was done).
    assert state["prediction"].count("getweather(") == 3
    assert opened_apps([*[AIMessage("", tool_calls=[{"name": "open_Hotels", "args": {},
                                                     "id": "x"}])],
                        ToolMessage("{}", tool_call_id="x")]) == {"Hotels"}


def test_tools_hierarchical_binds_an_apps_apis_only_once_it_is_open() -> None:
    seen: list[list[str]] = []

    class Recorder(ScriptedChatModel):
        def reply_with_tools(self, prompt: str, messages: Any, tools: Any) -> Any:
            seen.append(sorted(t["function"]["name"] for t in tools))
            return self.reply(prompt, messages)

    turns = iter([AIMessage("", tool_calls=[{"name": "open_Weather", "args": {}, "id": "1"}]),
                  AIMessage("done")])
    model = Recorder(rules=[(".", lambda _: next(turns))])
    catalog = load_catalog()
    every = [*open_tools(catalog), *api_tools(catalog)]
    agent = react_agent(model, every, tools_for=lambda m: [
        t for t in every if t.name.startswith("open_")
        or split_tool_name(t.name)[0] in opened_apps(m)])
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("weather?")]}))
    assert len(seen[0]) == 15 and all(n.startswith("open_") for n in seen[0])
    assert set(seen[1]) - set(seen[0]) == {"Weather__getweather"}


# ----------------------------------------------------------------------------- offline agents

def test_the_reference_agent_plays_the_gold_plan_in_waves() -> None:
    sample = load_category(Path(__file__).parents[1] / "datasets", "mm", "sample")[0]
    plan = tool_plan(sample, hierarchical=True)
    first = next_turn(plan, [HumanMessage(sample.input)])
    opened = [c["name"] for c in first.tool_calls]
    assert opened and all(n.startswith("open_") for n in opened)
    assert next_turn(ToolPlan(), [HumanMessage("x")]).content == "Done."
    # Corruption is deterministic per seed and a higher rate corrupts a superset.
    names = [t.name for t in api_tools(load_catalog())]
    low = corrupt_plan(plan, rate=0.3, seed="s", tool_names=names)[1]
    high = corrupt_plan(plan, rate=0.9, seed="s", tool_names=names)[1]
    assert low == corrupt_plan(plan, rate=0.3, seed="s", tool_names=names)[1]
    assert {x.split(":")[0] for x in low} <= {x.split(":")[0] for x in high}
    assert corrupt_plan(plan, rate=1.0, seed="s", tool_names=names)[0] != plan


@pytest.mark.parametrize("strategy", ["tools", "tools_hierarchical"])
def test_reference_scores_100_on_the_samples(samples: Path, tmp_path: Path,
                                             strategy: str) -> None:
    below = {}
    for category in ("ss", "sm", "ms", "mm"):
        summary = run(samples, tmp_path, subset=category, strategy=strategy, model="reference")
        below[category] = [r.index for r in summary.results() if any(
            (r.score or {}).get("scores", {}).get(k) != 100.0
            for k in ("executed_success", "trajectory_strict", "success"))]
        assert summary.metrics["tool_calls"] is not None
        assert summary.metrics["tool_calls"] >= 1
    # MS sample 5 asks findevents for event_type 'Sports' (as real MM 169-199 do), which the
    # SGD catalog does not list: the tool refuses it, and the weather call it feeds fails too.
    assert below == {"ss": [], "sm": [], "ms": [5], "mm": []}


@pytest.mark.parametrize("strategy", ["tools", "tools_hierarchical"])
def test_noisy_reference_is_lower_and_the_same_at_any_concurrency(
        shared_data: Path, tmp_path: Path, strategy: str) -> None:
    got = []
    for concurrency in (1, 16):
        summary = run(shared_data, tmp_path / str(concurrency), subset="mm", strategy=strategy,
                      model="noisy-reference:0.3", max_concurrency=concurrency, limit=60)
        got.append((summary.metrics, [(r.index, r.outputs.get("prediction"))
                                      for r in summary.results()]))
    assert got[0] == got[1]
    metrics = got[0][0]
    assert 5 < metrics["executed_success"] < 95
    assert metrics["trajectory_strict"] < 95 and metrics["tool_error_rate"] > 0


def test_reference_on_full_data_reaches_100_except_the_inconsistent_samples(
        shared_data: Path, tmp_path: Path) -> None:
    below = {}
    for category in ("ss", "sm", "ms", "mm"):
        summary = run(shared_data, tmp_path, subset=category, strategy="tools",
                      model="reference")
        below[category] = sorted(
            r.index for r in summary.results()
            if (r.score or {}).get("scores", {}).get("executed_success") != 100
            or (r.score or {}).get("scores", {}).get("trajectory_strict") != 100)
    # SS 21/159/173 share one input with other gold answers; MM 16 and 169-199 use
    # arguments or values outside the SGD catalog the tools are built from.
    assert below == {"ss": [21, 159, 173], "sm": [], "ms": [],
                     "mm": [16, 169, 170, 172, 174, 177, 180, 183, 184, 185, 188, 194, 195,
                            196, 198, 199]}


# ----------------------------------------------------------------------------- your own agent

def test_create_agent_and_a_factory_in_a_users_file_run_with_the_reference(
        samples: Path, tmp_path: Path) -> None:
    user_file = tmp_path / "my_agent.py"
    user_file.write_text(AGENT_FILE)
    for agent in ("langchain.agents:create_agent", f"{user_file}:build"):
        summary = run(samples, tmp_path / "runs", subset="sm", agent=agent, model="reference")
        assert summary.metrics["executed_success"] == 100.0, agent
        config = RunDir(summary.run_dir).read_config()
        assert config.strategy == "tools" and config.agent == agent_label(agent)
    assert agent_label(f"{user_file}:build") == "my_agent.py:build"


def test_tool_failures_reach_create_agent_as_error_messages_not_crashes(
        samples: Path, tmp_path: Path) -> None:
    # create_agent's ToolNode re-raises tool exceptions it was not told to handle: our tools
    # answer their own failures, so a wrong call is the agent's to repair, not a crashed example.
    summary = run(samples, tmp_path, subset="mm", agent="langchain.agents:create_agent",
                  model="noisy-reference:0.6")
    assert summary.counts["ok"] == summary.counts["examples"]
    assert summary.metrics["tool_error_rate"] is not None and summary.metrics["tool_error_rate"] > 0
    errors = [c for r in summary.results() for c in r.outputs["trace"]
              if c.get("kind") == "tool_call" and c["error"]]
    assert errors and all(c["output"].startswith("Error: ") for c in errors)


def test_agent_errors_are_one_line_and_refused_before_running(samples: Path,
                                                              tmp_path: Path) -> None:
    with pytest.raises(AgentLoadError, match="cannot import module 'no_such_mod'"):
        load_agent("no_such_mod:f")
    with pytest.raises(AgentLoadError, match=r"use module\.path:factory"):
        load_agent("create_agent")
    with pytest.raises(AgentLoadError, match="'nothing' not found"):
        load_agent("langchain.agents:nothing")
    result = CliRunner().invoke(app, ["run", "appbench", "--category", "ss", "--model",
                                      "reference", "--strategy", "hierarchical", "--agent",
                                      "langchain.agents:create_agent", "--data-dir",
                                      str(samples), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "runs its own agent and cannot run --agent; strategies that can: tools" in \
        result.output
    broken = tmp_path / "broken.py"
    broken.write_text("def build(model, tools):\n    raise RuntimeError('no key')\n")
    result = CliRunner().invoke(app, ["run", "appbench", "--category", "ss", "--model",
                                      "reference", "--agent", f"{broken}:build",
                                      "--data-dir", str(samples), "--out", str(tmp_path),
                                      "--no-upload"])
    assert result.exit_code == 1
    assert "agent broken.py:build: building it failed: RuntimeError: no key" in result.output
    assert "Traceback" not in result.output


def test_several_agents_run_in_one_command(samples: Path, tmp_path: Path) -> None:
    user_file = tmp_path / "mine.py"
    user_file.write_text(AGENT_FILE)
    result = CliRunner().invoke(app, [
        "run", "appbench", "--category", "ss", "--model", "reference", "--agent",
        "langchain.agents:create_agent", "--agent", f"{user_file}:build", "--data-dir",
        str(samples), "--out", str(tmp_path / "runs"), "--no-upload", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["agent"] for r in rows] == ["langchain.agents:create_agent",
                                          f"{user_file}:build"]
    assert all(r["metrics"]["executed_success"] == 100.0 for r in rows)
    assert len({r["run_dir"] for r in rows}) == 2


# ----------------------------------------------------------------------------- a real exchange

@pytest.fixture()
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-tools")
    with loopback_only(monkeypatch) as refused:
        yield
    assert refused == [], f"tried to reach {refused}"


@pytest.mark.usefixtures("_loopback")
def test_chatopenai_drives_the_tools_strategy_through_openai_tool_calls(
        samples: Path, tmp_path: Path) -> None:
    sample = load_category(samples, "ss", "sample")[0]
    [gold] = sample.calls
    name = f"{gold.app}__{gold.api}"

    def respond(request: ChatRequest) -> dict[str, Any] | str:
        tool_messages = [m for m in request.messages if m.get("role") == "tool"]
        if tool_messages:
            return "Done: " + tool_messages[-1]["content"][:40]
        return {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_abc", "type": "function",
            "function": {"name": name, "arguments": json.dumps(gold.literal_args)}}]}

    with FakeOpenAI(respond) as server:
        summary = run(samples, tmp_path, subset="ss", strategy="tools", limit=1,
                      model="openai:gpt-test", model_kwargs={"base_url": server.base_url})
        log = list(server.log)
    assert summary.metrics["executed_success"] == 100.0
    first, second = log[0].body, log[1].body
    assert {t["function"]["name"] for t in first["tools"]} >= {name}
    assert all(t["type"] == "function" and "parameters" in t["function"]
               for t in first["tools"])
    assistant = next(m for m in second["messages"] if m["role"] == "assistant")
    assert assistant["tool_calls"][0]["function"]["name"] == name
    tool = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool["tool_call_id"] == "call_abc" and json.loads(tool["content"])
    [result] = summary.results()
    assert result.usage.input_tokens == sum(r.usage.prompt for r in log if r.usage)
    assert result.usage.model_calls == 2


def test_an_agent_stopped_by_the_recursion_limit_keeps_the_calls_it_made() -> None:
    # A model that never stops calling: LangGraph stops the agent; the calls stay scored.
    ids = iter(range(100))
    model = ScriptedChatModel(rules=[(".", lambda _: AIMessage("", tool_calls=[
        {"name": "Weather__getweather", "args": {"city": "Oslo"}, "id": str(next(ids))}]))])
    agent = react_agent(model, api_tools(load_catalog()), max_turns=100)

    def read(state: Any, records: Any, messages: Any) -> dict[str, Any]:
        return {"prediction": str(len(records))}

    node = agent_node(agent, lambda state: [HumanMessage("weather?")], read, recursion_limit=9)
    update = asyncio.run(node({"inputs": {}}, {}))
    calls = [r for r in update["trace"] if r["kind"] == "tool_call"]
    # 9 steps: five model answers, four of whose calls ran before the limit.
    assert len(calls) == 5 and update["prediction"] == "5"
    assert sum(r["output"] is not None for r in calls) == 4
    assert update["trace"][-1]["stopped_at_recursion_limit"] == 9
    finished = asyncio.run(agent_node(react_agent(ScriptedChatModel(rules=[(".", "done")]), []),
                                      lambda state: [HumanMessage("x")], read)({"inputs": {}}, {}))
    assert "stopped_at_recursion_limit" not in finished["trace"][-1]


def test_an_open_tool_given_arguments_says_what_it_is_for() -> None:
    # What Qwen2.5-Coder-1.5B sent (text route, AppBench SS sample 0): the API's arguments.
    tool = next(t for t in open_tools(load_catalog()) if t.name == "open_Trains")
    call = {"type": "tool_call", "id": "1", "name": "open_Trains",
            "args": {"origin": "Anaheim Intermodal Center", "cost": 151}}
    answer = asyncio.run(tool.ainvoke(call))
    assert answer.status == "error"
    assert "open_Trains takes no arguments (got 'origin', 'cost')" in answer.content
    assert "Trains__findtrains" in answer.content and "TypeError" not in answer.content
    opened = asyncio.run(tool.ainvoke({**call, "args": {}}))
    assert opened.status == "success" and json.loads(opened.content)["opened"] is True


def test_calls_that_reach_no_api_are_an_empty_plan_not_a_format_error() -> None:
    # The same model's whole answer (text route, tools_hierarchical): its one call was read,
    # it failed, the model gave up in text. Read, but wrong: a plan of nothing, no format error.
    read = read_trajectory(load_catalog())
    args = {"origin": "Anaheim Intermodal Center", "cost": "$151"}
    messages = [HumanMessage("Book a train."),
                AIMessage("", tool_calls=[{"name": "open_Trains", "args": args, "id": "1"}]),
                ToolMessage("Error: open_Trains takes no arguments", tool_call_id="1",
                            status="error"),
                AIMessage("I cannot open the app.")]
    update = agent_outputs({"inputs": {}}, messages, read)
    assert update["prediction"] == "" and update["parse_error"] is None
    silent = agent_outputs({"inputs": {}}, [HumanMessage("Book a train."), AIMessage("No.")],
                           read)
    assert silent["parse_error"] == "the agent called no tool"
