"""AppBench APIs as LangChain tools: one ``StructuredTool`` per API of the catalog, and one
``open_<App>`` tool per app for agents that discover APIs app by app.

* **Names** are ``<App>__<api>`` (``Restaurants__findrestaurants``): letters, digits and
  underscores, under 64 characters -- valid for every major provider. The app is part of the
  name, so an API is always called within its app.
* **Arguments** follow the catalog: required and optional slots, each a string (the values of
  AppBench are strings: ``'2019-03-12'``, ``'13:30'``, ``'3'``), enumerated slots with their
  values. A number or boolean is accepted and written as text (``3`` -> ``'3'``, ``true`` ->
  ``'True'``). An unknown argument, a missing required one or a value outside an enumeration
  is an error the agent sees, with the fix in words.
* **Results** are a JSON object of the API's result slots: a slot named like one of the call's
  arguments echoes it (``findrestaurants(location='San Francisco')`` returns that ``location``,
  as the gold trajectories assume), the others are deterministic synthetic values shaped by
  the slot's type (:func:`~tooleval_agents.appbench.stubs.synthetic_value`). The tools never
  see the gold; they are pure functions of their arguments, so any agent can call them
  concurrently.

:func:`calls_from_trajectory` turns an agent's tool calls back into AppBench calls: an argument
is a *dependency* ``#k=k`` when its value is the value an earlier call (in an earlier turn)
returned under the same name -- the gold data's convention -- and a literal otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from tooleval_agents.agents import ToolCallRecord, tool_error_text
from tooleval_agents.appbench.names import (  # noqa: F401  (re-exported: the tools' names)
    OPEN_PREFIX,
    SEPARATOR,
    open_tool_name,
    split_tool_name,
    tool_name,
)
from tooleval_agents.appbench.records import ApiSpec, AppCall, ArgSpec, Catalog
from tooleval_agents.appbench.stubs import normalise, synthetic_value


def _slot_schema(spec: ArgSpec) -> dict[str, Any]:
    desc = spec.desc or ""
    if spec.type not in ("str", ""):
        desc = f"{desc} ({spec.type})".strip()
    schema: dict[str, Any] = {"type": "string", "description": desc}
    if spec.values:
        schema["enum"] = list(spec.values)
    if spec.default is not None:
        schema["description"] = f"{desc}; default {spec.default}".strip("; ")
    return schema


def args_schema(spec: ApiSpec) -> dict[str, Any]:
    """The JSON schema of an API's arguments (required slots required)."""
    props = {k: _slot_schema(v) for k, v in {**spec.required, **spec.optional}.items()}
    return {"type": "object", "properties": props, "required": list(spec.required),
            "additionalProperties": False}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float | str):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def check_call(api: str, spec: ApiSpec, args: dict[str, Any]) -> dict[str, str]:
    """The arguments as text; ``ToolException`` naming every problem and its fix."""
    known = {**spec.required, **spec.optional}
    problems = [f"unknown argument {k!r} (it accepts: {', '.join(known)})"
                for k in args if k not in known]
    problems += [f"missing required argument {k!r} ({spec.required[k].desc})"
                 for k in spec.required if args.get(k) in (None, "")]
    values = {k: _text(v) for k, v in args.items() if k in known and v is not None}
    for k, v in values.items():
        allowed = known[k].values
        if allowed and normalise(v) not in {normalise(a) for a in allowed}:
            problems.append(f"{k!r} must be one of {', '.join(allowed)}; got {v!r}")
    if problems:
        raise ToolException(f"{api}: " + "; ".join(problems))
    return values


def results(api: str, spec: ApiSpec, values: dict[str, str]) -> dict[str, str]:
    """What a call returns: arguments echoed under their own names, the other result slots
    synthetic (deterministic per API and arguments)."""
    return {name: values[name] if name in values else
            synthetic_value(api, name, values, slot) for name, slot in spec.results.items()}


def api_tool(app: str, api: str, spec: ApiSpec) -> StructuredTool:
    """One API as a tool (see the module docstring).

    >>> from tooleval_agents.appbench.catalog import load_catalog
    >>> spec = load_catalog().api("Weather", "getweather")
    >>> tool = api_tool("Weather", "getweather", spec)
    >>> tool.name, json.loads(tool.invoke({"city": "Paris"}))["city"]
    ('Weather__getweather', 'Paris')
    """

    def run(**kwargs: Any) -> str:
        return json.dumps(results(api, spec, check_call(api, spec, kwargs)),
                          ensure_ascii=False)

    return StructuredTool.from_function(
        func=run, name=tool_name(app, api), description=f"{app} app: {spec.desc}",
        args_schema=args_schema(spec), handle_tool_error=tool_error_text)


def open_tool(app: str, catalog: Catalog) -> StructuredTool:
    """A tool that opens an app: its answer lists the app's API tools, bound from then on."""
    names = [tool_name(app, api) for api in catalog.apps[app].apis]

    def run(**kwargs: Any) -> str:
        # Small models pass the API's arguments here (seen with Qwen2.5-Coder-1.5B): say what
        # the tool is for, as an API tool says what it accepts, instead of a Python TypeError.
        if kwargs:
            raise ToolException(f"{open_tool_name(app)} takes no arguments (got "
                                f"{', '.join(map(repr, kwargs))}): it opens the {app} app; "
                                f"then call one of its tools ({', '.join(names)}) with them")
        return json.dumps({"app": app, "opened": True, "tools": names})

    return StructuredTool.from_function(
        func=run, name=open_tool_name(app),
        description=f"Open the {app} app ({catalog.apps[app].desc}) to use its APIs",
        args_schema={"type": "object", "properties": {}}, handle_tool_error=tool_error_text)


def api_tools(catalog: Catalog) -> list[BaseTool]:
    """Every API of the catalog as a tool, in catalog order (33)."""
    return [api_tool(app, api, spec) for app, a in catalog.apps.items()
            for api, spec in a.apis.items()]


def open_tools(catalog: Catalog) -> list[BaseTool]:
    """One ``open_<App>`` tool per app (15)."""
    return [open_tool(app, catalog) for app in catalog.apps]


def calls_from_trajectory(records: Sequence[ToolCallRecord], catalog: Catalog) -> list[AppCall]:
    """An agent's API calls as AppBench calls (``open_`` calls left out), each with its
    ``raw`` line ``App: [r1, r2 = api(#k='v', #k2=k2)]``.

    An argument is a dependency when an earlier turn's call answered the same name with the
    same value (normalised); the latest such call feeds it. A call's returns are the names it
    answered with (the catalog's result slots when it failed).

    >>> rec = [ToolCallRecord(name="Restaurants__findrestaurants", turn=0,
    ...                       args={"location": "SF", "category": "Thai"},
    ...                       output='{"restaurant_name": "Baan", "location": "SF"}'),
    ...        ToolCallRecord(name="Restaurants__reserverestaurant", turn=1,
    ...                       args={"restaurant_name": "Baan", "time": "13:30"}, output="{}")]
    >>> from tooleval_agents.appbench.catalog import load_catalog
    >>> [c.raw for c in calls_from_trajectory(rec, load_catalog())][1]
    "Restaurants: [ = reserverestaurant(#restaurant_name=restaurant_name, #time='13:30')]"
    """
    out: list[AppCall] = []
    answered: list[tuple[int, dict[str, Any]]] = []  # (turn, result) of successful calls
    for record in records:
        if record.name.startswith(OPEN_PREFIX):
            continue
        app, api = split_tool_name(record.name)
        literal: dict[str, str] = {}
        dependent: dict[str, str] = {}
        for key, value in record.args.items():
            text = _text(value)
            fed = any(turn < record.turn and key in result
                      and normalise(_text(result[key])) == normalise(text)
                      for turn, result in answered)
            if fed:
                dependent[key] = key
            else:
                literal[key] = text
        result = record.result()
        spec = catalog.api(app, api) if app is not None else None
        returns = list(result) if result is not None else list(spec.results if spec else [])
        if result is not None:
            answered.append((record.turn, result))
        out.append(AppCall(app=app, api=api, returns=returns, literal_args=literal,
                           dependent_args=dependent,
                           raw=call_line(app, api, returns, literal, dependent)))
    return out


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def call_line(app: str | None, api: str, returns: Sequence[str], literal: dict[str, str],
              dependent: dict[str, str]) -> str:
    """A call in the model-answer form, arguments sorted by name as in the gold lines."""
    args = {**{k: _quote(v) for k, v in literal.items()}, **dependent}
    body = ", ".join(f"#{k}={args[k]}" for k in sorted(args))
    return f"{app or 'Unknown'}: [{', '.join(returns)} = {api}({body})]"
