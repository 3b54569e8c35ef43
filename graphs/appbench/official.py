"""AppBench's official prompts, read from the user's fetched copy of the upstream code.

``-O prompts=official`` (or ``--prompts official``) on ``hierarchical``, ``flat`` and
``few_shot`` sends what the official ``MetaAgent`` sent, through the same chat layout as its
OpenAI client: the filled template as the *system* message, the demonstrations (few-shot) as
user/assistant turns, then the sample's instruction, unchanged, as the user message.

* App selection (hierarchical stage 1): the ``app_instruction`` literal of
  ``MetaAgent.find_required_app`` (``code/agents/meta_agent.py``) filled with one
  ``App: desc`` entry per app.
* Planning (stage 2, flat, few-shot): ``code/prompts/appbench/api_for_all_agent.txt`` filled
  with ``App: str(desc_dict)`` entries -- the selected apps', or all 15.
* Demonstrations: user = the demo's instruction, assistant = ``App: [gold line] \\n`` per call.

The app/API descriptions are the ``self.desc`` dict literals of the upstream app classes
(``code/apps/<app>.py``, the app list from ``code/apps/mobile.py``), rendered with ``str()``
as upstream did; a data directory laid out like the shared copy may hold them as
``derived/apps_apis.json`` instead (the same dicts, in the same order). Templates are taken as
literals (:mod:`tooleval_agents.data.upstream`); nothing upstream runs.

Reproduced on purpose: sampling at temperature 0 and top_p 0 (``test.py``; the paper says
0.1), answers up to 1024 tokens (the client's default), the instruction sent as it is in the
data (a leading ``USER:`` or trailing newline kept). Deliberate deviations: stage 2 lists the
selected apps in the catalog's order (upstream iterated a Python ``set``, whose order changes
between runs); an app-selection answer naming no app falls back to all apps (upstream dropped
the sample from its results, which shrinks the denominator); demonstrations come from the test
split by the paper's rule (the train split they were drawn from was never published; see
``few_shot``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from tooleval_agents.data.inputs import note_file
from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.data.upstream import (
    UpstreamError,
    assigned,
    function,
    literal,
    only,
    parse_source,
    per_version,
    read_text,
    upstream_file,
)

SOURCE = "appbench"
AGENT = "code/agents/meta_agent.py"
PLAN_TEMPLATE = "code/prompts/appbench/api_for_all_agent.txt"
APPS = "code/apps"
MOBILE = f"{APPS}/mobile.py"
DERIVED = "derived/apps_apis.json"
"""The same dicts as data (the shared copy's layout); used when the app files are absent."""
SAMPLING = {"temperature": 0.0, "top_p": 0.0, "max_tokens": 1024}
"""What ``test.py`` and the client passed."""


@dataclass
class OfficialTexts:
    """The official templates and the app catalog as upstream rendered it."""

    select_template: str
    """App selection; placeholder ``{app_desc}``."""
    plan_template: str
    """Planning; placeholder ``{app_api_list}``."""
    apps: dict[str, dict[str, Any]]
    """App -> its description dict, in upstream's app order."""
    _plans: dict[tuple[str, ...], str] = field(default_factory=dict)

    @cached_property
    def app_desc(self) -> str:
        """Every app's one-line description (``flat_apps_apis(..., True)`` upstream)."""
        return "".join(f"{app}: {desc['desc']} \n\n " for app, desc in self.apps.items())

    def app_api_list(self, apps: Sequence[str] | None = None) -> str:
        """The given apps' description dicts (all when ``None``), in upstream's app order."""
        return "".join(f"{app}: {self.apps[app]} \n\n " for app in self._order(apps))

    @cached_property
    def select_system(self) -> str:
        """The app-selection system message."""
        return self.select_template.format(app_desc=self.app_desc)

    def plan_system(self, apps: Sequence[str] | None = None) -> str:
        """The planning system message with the given apps (all when ``None``); rendered
        once per app set (a run asks for the same few hundreds of times)."""
        key = self._order(apps)
        if key not in self._plans:
            self._plans[key] = self.plan_template.format(app_api_list=self.app_api_list(key))
        return self._plans[key]

    def _order(self, apps: Sequence[str] | None) -> tuple[str, ...]:
        return tuple(a for a in self.apps if apps is None or a in apps)


def load_official(data_dir: Path) -> OfficialTexts:
    """The official texts from the fetched, sha-checked upstream files under ``data_dir``."""
    agent = upstream_file(SOURCE, AGENT, data_dir)
    select = literal(only(assigned(function(parse_source(agent), "find_required_app",
                                            within="MetaAgent"), "app_instruction"),
                          f"{agent}: app_instruction"))
    if not isinstance(select, str):
        raise UpstreamError(f"{agent}: app_instruction is not a string")
    return OfficialTexts(select_template=select,
                         plan_template=read_text(SOURCE, PLAN_TEMPLATE, data_dir),
                         apps=app_descriptions(data_dir))


def app_descriptions(data_dir: Path) -> dict[str, dict[str, Any]]:
    """App -> description dict: from the upstream app classes when fetched, else from
    ``derived/apps_apis.json``."""
    derived = data_dir / SOURCE / DERIVED
    if not (data_dir / SOURCE / MOBILE).is_file() and derived.is_file():
        note_file(derived, data_dir)  # not pinned: its content is what the run's identity holds
        return _derived(derived)
    return _from_classes(upstream_file(SOURCE, MOBILE, data_dir))


@per_version
def _derived(path: Path) -> dict[str, dict[str, Any]]:
    value = parse_json(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict) or not all(isinstance(v, dict) and "desc" in v
                                              for v in value.values()):
        raise UpstreamError(f"{path}: not an app -> description mapping")
    return value


@per_version
def _from_classes(mobile: Path) -> dict[str, dict[str, Any]]:
    data_dir = mobile.parents[3]  # <data_dir>/appbench/code/apps/mobile.py
    return read_app_classes(mobile, lambda module: upstream_file(
        SOURCE, f"{APPS}/{module}.py", data_dir))


def read_app_classes(mobile: Path,
                     module_path: Callable[[str], Path]) -> dict[str, dict[str, Any]]:
    """App -> the ``self.desc`` literal of its class, in ``Mobile.app_list`` order; each app's
    file is ``module_path(<module imported in mobile.py>)``."""
    tree = parse_source(mobile)
    order = literal(only(assigned(function(tree, "__init__", within="Mobile"), "self.app_list"),
                         f"{mobile}: Mobile.app_list"))
    modules = {alias.name: node.module.rsplit(".", 1)[-1] for node in tree.body
               if isinstance(node, ast.ImportFrom) and node.module
               and node.module.startswith("apps.") for alias in node.names}
    apps: dict[str, dict[str, Any]] = {}
    for app in order:
        if app not in modules:
            raise UpstreamError(f"{mobile}: app {app!r} is not imported from apps.*")
        path = module_path(modules[app])
        init = function(parse_source(path), "__init__", within=app)
        apps[app] = literal(only(assigned(init, "self.desc"), f"{path}: {app}.desc"))
    return apps


def demo_answer(used_app: Sequence[str], api_results: Sequence[str]) -> str:
    """A demonstration's assistant turn as upstream wrote it."""
    return "".join(f"{app}: [{line}] \n" for app, line in zip(used_app, api_results,
                                                               strict=False))


def official_messages(system: str, instruction: str,
                      demos: Sequence[tuple[str, str]] = ()) -> list[BaseMessage]:
    """System template, demonstration turns (instruction, answer), then the instruction."""
    messages: list[BaseMessage] = [SystemMessage(system)]
    for user, answer in demos:
        messages += [HumanMessage(user), AIMessage(answer)]
    messages.append(HumanMessage(instruction))
    return messages


__all__ = ["SAMPLING", "OfficialTexts", "app_descriptions", "demo_answer", "load_official",
           "official_messages", "read_app_classes"]
