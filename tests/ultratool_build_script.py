"""A scripted, offline stand-in for the chat model of ``tooleval build ultratool``.

:func:`reply` answers every construction prompt from its content alone (stage title, the query
in ``<input>``, the plan and toolset sections), so answers do not depend on call order. Its
answers are generic but well-formed: a two-task plan, tools created when fewer than two are
available (two near-identical names, so the tool merge has work), a refined plan naming the
request's details, and calls that fill every argument with a value of its type and pass the
first call's result to the second one by ``<name>``.

Trigger words in a query script failures: ``NO-PLAN`` (the plan answer has no numbered step),
``BROKEN-JSON`` (the tool-creation answer is not JSON), ``BAD-TOOL`` (a call to a tool that
does not exist), ``RAISE`` (the model raises, as an unreachable provider would).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from tooleval_agents.graphs.ultratool.build_prompts import TITLES, TOOL_FREE, BuildStage, PromptLang
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.reference import last_input_block

HEADERS: dict[PromptLang, dict[str, str]] = {
    "en": {"plan": "Plan:", "first": "First plan:", "available": "Available tools:",
           "tools": "Tools:", "toolset": "Toolset:"},
    "zh": {"plan": "计划：", "first": "初步计划：", "available": "已有工具：", "tools": "工具：",
           "toolset": "工具集："},
}


def _section(prompt: str, header: str) -> str:
    m = re.search(rf"(?m)^{re.escape(header)}\n(.*?)(?:\n\n|\Z)", prompt, re.S)
    assert m is not None, f"no {header!r} section in the prompt"
    return m.group(1).strip()


def _stage(prompt: str) -> tuple[BuildStage, PromptLang]:
    first = prompt.strip().splitlines()[0]
    for lang, titles in TITLES.items():
        for stage, title in titles.items():
            if first == title:
                return stage, lang
    raise LookupError(f"not a construction prompt: {first!r}")


def _snippet(query: str) -> str:
    return re.sub(r"[\"'<>=,()（），]", " ", query)[:40].strip()


def _tools(lang: PromptLang, query: str, have: int) -> list[dict[str, Any]]:
    zh = lang == "zh"

    def prop(kind: str, en: str, cn: str) -> dict[str, str]:
        return {"type": kind, "description": cn if zh else en}

    record = {"name": "record_request",
              "description": "记录用户的请求" if zh else "Records what the user asked for",
              "arguments": {"type": "object", "properties": {
                  "request": prop("string", "The request to record", "要记录的请求"),
                  "count": prop("integer", "How many items it concerns", "涉及的数量")}},
              "results": {"type": "object", "properties": {
                  "record_id": prop("string", "Identifier of the record", "记录编号"),
                  "saved": prop("boolean", "Whether it was saved", "是否已保存")}}}
    # Two spellings of one tool, chosen by the query: the merge stage joins them.
    plural = int(hashlib.sha256(query.encode()).hexdigest(), 16) % 2
    confirm = {"name": "send_confirmations" if plural else "send_confirmation",
               "description": "向用户发送确认" if zh else "Sends the user a confirmation",
               "arguments": {"type": "object", "properties": {
                   "record_id": prop("string", "The record to confirm", "要确认的记录"),
                   "channel": {**prop("string", "How to send it", "发送方式"),
                               "enum": ["email", "sms"]}}},
               "results": {"type": "object", "properties": {
                   "delivered": prop("boolean", "Whether it arrived", "是否送达")}}}
    return [record, confirm][have:] if have < 2 else []


def _plan(lang: PromptLang) -> str:
    if lang == "zh":
        return ("1. 理解请求\n1.1 从请求中读出细节\n2. 执行请求\n2.1 调用服务完成主要操作\n"
                "2.2 检查结果")
    return ("1. Understand the request\n1.1 Read the details from the request\n"
            "2. Carry out the request\n2.1 Use a service for the main action\n"
            "2.2 Check the outcome")


def _value(prop: dict[str, Any], text: str) -> str:
    if isinstance(prop.get("enum"), list):
        return repr(prop["enum"][0])
    return {"integer": "2", "number": "2.5", "boolean": "True", "array": "['a', 'b']",
            "object": "{'k': 'v'}"}.get(prop.get("type", "string"), repr(text))


def _call(tool: dict[str, Any], text: str, refs: set[str]) -> str:
    args = [f"{name}=<{name}>" if name in refs else f"{name}={_value(prop, text)}"
            for name, prop in tool["arguments"]["properties"].items()]
    return f"{tool['name']}({', '.join(args)})"


def reply(prompt: str) -> str:
    """The scripted answer to a construction prompt (see the module doc)."""
    stage, lang = _stage(prompt)
    query = (last_input_block(prompt) or "").strip()
    h = HEADERS[lang]
    if "RAISE" in query and stage != "merge":
        raise RuntimeError("scripted provider failure")
    if stage in ("generalise", "complicate"):
        tails = {("generalise", "en"): [" (for next week)", " (for a friend)"],
                 ("generalise", "zh"): ["（下周）", "（帮朋友办）"],
                 ("complicate", "en"): [" Then confirm it to me.", " Keep a record of it too."],
                 ("complicate", "zh"): ["然后向我确认。", "并且留一份记录。"]}[stage, lang]
        return json.dumps({"rewrites": [query + t for t in tails]}, ensure_ascii=False)
    if stage == "plan":
        return "Sorry, I cannot plan this." if "NO-PLAN" in query else _plan(lang)
    if stage == "create":
        if "BROKEN-JSON" in query:
            return '[{"name": "half_a_tool", "description": '
        have = json.loads(_section(prompt, h["available"]))
        return json.dumps(_tools(lang, query, len(have)), ensure_ascii=False)
    if stage == "refine":
        lines = _section(prompt, h["first"]).splitlines()
        detail = "（请求细节：{}）" if lang == "zh" else " (Request details: {})"
        lines[1] += detail.format(_snippet(query))
        return json.dumps([{"step": line} for line in lines], ensure_ascii=False)
    if stage == "annotate":
        steps = _section(prompt, h["plan"]).splitlines()
        tools = json.loads(_section(prompt, h["toolset"]))
        first, second = tools[0], tools[1] if len(tools) > 1 else tools[0]
        results = set(first["results"]["properties"])
        calls = {"2.1": _call(first, _snippet(query), set()),
                 "2.2": _call(second, _snippet(query), results & set(
                     second["arguments"]["properties"]))}
        if "BAD-TOOL" in query:
            calls["2.1"] = "teleport(destination='Mars')"
        out = []
        for step in steps:
            sid = step.split(" ", 1)[0].rstrip(".")
            tool = "null" if sid in ("1", "2") else calls.get(sid, TOOL_FREE[lang])
            out.append({"step": step, "tool": tool})
        return json.dumps(out, ensure_ascii=False)
    tools = json.loads(query)
    return json.dumps({"name": tools[0]["name"], "description": tools[0]["description"]},
                      ensure_ascii=False)


def scripted_model() -> ScriptedChatModel:
    """The scripted model as a LangChain chat model."""
    return ScriptedChatModel(rules=[(r".", reply)], model_name="scripted-ultratool-builder")
