"""AppBench's answer formats for ``noisy-reference``
(:mod:`tooleval_agents.models.corruptions`), declared by :meth:`AppBenchBenchmark.answer_formats`:

* ``app_list`` (app selection, ``["Hotels", "Weather"]``): drop an app, add a wrong app,
  replace an app (names from :data:`~tooleval_agents.appbench.names.APP_APIS`);
* ``call_lines`` (``App: [r = api(#k='v', #k2=k2)]`` lines): wrong app, another API of the
  same app, a missing argument, a mutated literal, a broken dependency (``#k=k`` turned into a
  literal or into a name no call returns), drop a call, add a call, swap two lines.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from tooleval_agents.appbench.names import API_APPS, APP_APIS
from tooleval_agents.models.corruptions import Apply, dumps_json, edit_string, loads_json

# ----------------------------------------------------------------------------- app lists

_APP_NAME = re.compile(r"\b(" + "|".join(sorted(APP_APIS, key=len, reverse=True)) + r")\b")


def _app_list(text: str, kind: str, rng: random.Random) -> str | None:
    ok, value = loads_json(text)
    if ok and isinstance(value, list) and all(isinstance(v, str) for v in value):
        apps = list(value)
        missing = [a for a in APP_APIS if a not in apps]
        if kind == "drop_app":
            if not apps:
                return None
            del apps[rng.randrange(len(apps))]
        elif kind == "add_app":
            if not missing:
                return None
            apps.insert(rng.randint(0, len(apps)), rng.choice(missing))
        else:  # replace_app
            if not apps or not missing:
                return None
            apps[rng.randrange(len(apps))] = rng.choice(missing)
        return dumps_json(apps)
    # not a JSON list of strings (``[Hotels, Weather]``, prose): edit the names in place
    found = list(_APP_NAME.finditer(text))
    present = {m.group(1) for m in found}
    missing = [a for a in APP_APIS if a not in present]
    if not found or (kind != "drop_app" and not missing):
        return None
    m = rng.choice(found)
    start, end = m.span()
    if kind == "replace_app":
        return text[:start] + rng.choice(missing) + text[end:]
    if kind == "add_app":
        last = found[-1]
        quote = text[last.end()] if last.end() < len(text) and text[last.end()] in "'\"" else ""
        at = last.end() + len(quote)
        return text[:at] + f", {quote}{rng.choice(missing)}{quote}" + text[at:]
    # drop_app: the name with its quotes and one separating comma
    if start > 0 and end < len(text) and text[start - 1] in "'\"" and text[end] == text[
            start - 1]:
        start, end = start - 1, end + 1
    after = re.match(r"\s*,\s*", text[end:])
    if after:
        end += after.end()
    else:
        before = re.search(r",\s*$", text[:start])
        if before:
            start = before.start()
    return text[:start] + text[end:]


# ----------------------------------------------------------------------------- call lines

_WRAPPED = re.compile(r"^(\s*)([A-Za-z][\w ]*?)(\s*:\s*\[)(.*)\](\s*[;,]?\s*)$")
_BODY = re.compile(r"^(\s*(?:[^=()\[\]]*?\s*=\s*)?)([A-Za-z_][\w.]*)\s*\((.*)\)(\s*)$")
_ARG = re.compile(r"\s*(#?)([A-Za-z_]\w*)\s*=\s*('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,]*?)"
                  r"\s*(?:,|$)")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")


@dataclass
class _Arg:
    hash: str
    key: str
    value: str

    @property
    def is_dependency(self) -> bool:
        return bool(_IDENT.match(self.value))

    @property
    def quote(self) -> str | None:
        v = self.value
        return v[0] if len(v) >= 2 and v[0] in "'\"" and v[-1] == v[0] else None


@dataclass
class _Call:
    lead: str
    app: str | None
    opener: str
    returns: str
    api: str
    args: list[_Arg] | None
    raw_args: str
    tail: str

    def render(self) -> str:
        inner = self.raw_args if self.args is None else ", ".join(
            f"{a.hash}{a.key}={a.value}" for a in self.args)
        body = f"{self.returns}{self.api}({inner})"
        if self.app is None:
            return f"{self.lead}{body}{self.tail}"
        return f"{self.lead}{self.app}{self.opener}{body}]{self.tail}"

    @property
    def returned(self) -> set[str]:
        names = self.returns.split("=", 1)[0]
        return {n.strip() for n in names.split(",") if n.strip()}

    @property
    def app_of(self) -> str | None:
        if self.app in APP_APIS:
            return self.app
        owners = API_APPS.get(self.api.lower(), ())
        return owners[0] if len(owners) == 1 else None


def _parse_args(raw: str) -> list[_Arg] | None:
    if not raw.strip():
        return []
    args: list[_Arg] = []
    pos = 0
    while pos < len(raw):
        m = _ARG.match(raw, pos)
        if m is None or m.end() == pos:
            return None
        args.append(_Arg(*m.groups()))
        pos = m.end()
    return args


def _parse_call(line: str) -> _Call | None:
    lead, app, opener, body, tail = "", None, "", line, ""
    w = _WRAPPED.match(line)
    if w:
        lead, app, opener, body, tail = w.groups()
    b = _BODY.match(body)
    if b is None:
        return None
    returns, api, raw_args, space = b.groups()
    if app is None:
        tail = space
    return _Call(lead, app, opener, returns, api, _parse_args(raw_args), raw_args, tail)


def _call_lines(text: str, kind: str, rng: random.Random) -> str | None:
    lines = text.split("\n")
    calls = {i: c for i, line in enumerate(lines) if (c := _parse_call(line)) is not None}
    if not calls:
        return None
    idx = sorted(calls)
    if kind == "drop_call":
        del lines[rng.choice(idx)]
        return "\n".join(lines)
    if kind == "swap_lines":
        pairs = [(a, b) for a in idx for b in idx if a < b and lines[a] != lines[b]]
        if not pairs:
            return None
        a, b = rng.choice(pairs)
        lines[a], lines[b] = lines[b], lines[a]
        return "\n".join(lines)
    if kind == "add_call":
        i = rng.choice(idx)
        call = copy.deepcopy(calls[i])
        other_apis = [a for a in APP_APIS.get(call.app_of or "", ()) if a != call.api]
        if other_apis and rng.random() < 0.5:
            call.api = rng.choice(other_apis)  # a needless call of a sibling API
        lines.insert(i + 1, call.render())
        return "\n".join(lines)
    edit = _CALL_EDITS[kind]
    returned = set().union(*(c.returned for c in calls.values()))
    # a throwaway generator for the "does it apply" probe keeps the real draws independent
    probe = random.Random(0)
    candidates = [i for i in idx
                  if edit(copy.deepcopy(calls[i]), returned, probe) is not None]
    if not candidates:
        return None
    i = rng.choice(candidates)
    edited = edit(calls[i], returned, rng)
    assert edited is not None
    lines[i] = edited.render()
    return "\n".join(lines)


def _wrong_app(call: _Call, returned: set[str], rng: random.Random) -> _Call | None:
    if call.app is None:
        return None
    call.app = rng.choice([a for a in APP_APIS if a != call.app])
    return call


def _wrong_api(call: _Call, returned: set[str], rng: random.Random) -> _Call | None:
    others = [a for a in APP_APIS.get(call.app_of or "", ()) if a != call.api]
    if not others:
        return None
    call.api = rng.choice(others)
    return call


def _drop_call_argument(call: _Call, returned: set[str], rng: random.Random) -> _Call | None:
    if not call.args:
        return None
    del call.args[rng.randrange(len(call.args))]
    return call


def _mutate_literal(call: _Call, returned: set[str], rng: random.Random) -> _Call | None:
    literals = [a for a in call.args or () if a.quote]
    if not literals:
        return None
    arg = rng.choice(literals)
    q = arg.quote or "'"
    # no bare quote inside, and no trailing backslash that would escape the closing quote
    inner = edit_string(arg.value[1:-1], rng).replace(q, "").rstrip("\\")
    if inner == arg.value[1:-1]:
        inner += "x"
    arg.value = f"{q}{inner}{q}"
    return call


def _break_dependency(call: _Call, returned: set[str], rng: random.Random) -> _Call | None:
    deps = [a for a in call.args or () if a.is_dependency]
    if not deps:
        return None
    arg = rng.choice(deps)
    if rng.random() < 0.5:
        arg.value = f"'{arg.value.replace('_', ' ')}'"  # the placeholder written as a literal
    else:
        names = [f"{arg.value}_id", f"{arg.value}s", "result", "output", f"{arg.key}_value"]
        arg.value = rng.choice([n for n in names if n not in returned] or ["unknown_result"])
    return call


_CALL_EDITS: dict[str, Callable[[_Call, set[str], random.Random], _Call | None]] = {
    "wrong_app": _wrong_app,
    "wrong_api": _wrong_api,
    "drop_argument": _drop_call_argument,
    "mutate_value": _mutate_literal,
    "broken_dependency": _break_dependency,
}


FORMATS: dict[str, tuple[tuple[str, ...], Apply]] = {
    "app_list": (("drop_app", "add_app", "replace_app"), _app_list),
    "call_lines": (("wrong_app", "wrong_api", "drop_argument", "mutate_value",
                    "broken_dependency", "drop_call", "add_call", "swap_lines"), _call_lines),
}
"""AppBench's answer formats: name -> (corruption kinds, apply)."""
