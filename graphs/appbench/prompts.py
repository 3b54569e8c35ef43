"""Prompt texts of the AppBench workflows, and the catalog rendered for them.

They restate the paper's two prompts (AppBench, Appendix B, Tables 9 and 10) in our own words:
app selection from one line per app, then planning from the API descriptions of the chosen apps
(or of all 15, *flat*), answered with one line per call::

    App: [returned_1, returned_2 = api(#argument='literal', #other=returned_name)]

Same content as the official prompts: unspecified optional arguments are left out, a dependency
names a returned argument of an earlier call, literals are quoted, dates are inferred from today
being 2019-03-01. Deliberate differences:

* the apps and APIs are rendered from our catalog (:mod:`tooleval_agents.appbench.catalog`) as
  an indented list with each argument's type, format (``yyyy-mm-dd``, ``hh:mm``) and allowed
  values, not as Python ``str()`` of nested dicts; SGD default values are not shown, since the
  task says there are none;
* app selection asks for a JSON list (``["Hotels", "Weather"]``) instead of ``[app1, app2]``;
* rule 1 says the app's name replaces ``App`` (never the word itself): a real model
  (Qwen2.5-Coder-1.5B) copied the placeholder ``App:`` into every line. Showing a concrete line
  instead (``Hotels: [address = searchhouse(...)]``) was tried and worse: the same model then
  named the app but dropped the API (SS, 3 samples: API F1 57 -> 0);
* the example's instruction sits inside ``<input>`` tags, demonstrations inside ``<example>``
  tags (how the ``reference`` model recognises the example);
* the repair prompt (strategy ``execute_repair``) is ours: the paper has no execution feedback.
* what examples share comes first and the example last, so a prefix cache (a provider's, a
  local server's) serves the shared part: the rules before the catalog (hierarchical stage 2
  shows each example its own apps, and every example the same rules), and in the repair prompt
  the request before the previous plan (the repair prompt starts as the planning prompt did).

Every prompt ends with a distinct marker phrase (:data:`SELECT_MARKER`, :data:`PLAN_MARKER`,
:data:`REPAIR_MARKER`) that no other prompt contains.
"""

from __future__ import annotations

from collections.abc import Iterable

from tooleval_agents.appbench.records import ApiSpec, ArgSpec, Catalog

TODAY = "2019-03-01"
"""The current date of the official planning prompt (a Friday)."""

SELECT_MARKER = "Name the apps needed for the request above."
"""Ends the app-selection prompt (hierarchical stage 1)."""
PLAN_MARKER = "Write the API calls for the request above."
"""Ends the planning prompt (hierarchical stage 2, flat, few-shot, first round of repair)."""
REPAIR_MARKER = "Write the corrected full plan for the request above."
"""Ends the repair prompt of ``execute_repair``."""

_FORMATS = {"date": "yyyy-mm-dd", "time": "hh:mm, 24-hour"}

SELECT_TEMPLATE = """\
You help a user by deciding which apps on their phone are needed to carry out a request.

The available apps, one per line:
{apps}

Pick every app the request needs, and only those. Answer with a JSON list of app names spelled \
exactly as above, for example ["Hotels", "Weather"], and write nothing else.

The user's request:
{input_block}
{marker}"""

PLAN_RULES = f"""\
Answer with one line per API call, in the order the calls must run, and nothing else:
App: [returned_1, returned_2, ... = api_name(#argument='value', #other_argument=returned_name)]

Rules:
1. App is an app's name (Hotels, Trains, ...: never the word "App" itself) and api_name one of \
that app's APIs, both spelled exactly as listed.
2. Before the "=" list the arguments the API returns, as listed under "returns".
3. Write each input argument as #name=value. Give every required argument. Give an optional \
argument only when the user states its value; leave the others out.
4. A value stated by the user is a literal in single quotes: #city='San Jose'. Write it in the \
listed format (dates yyyy-mm-dd, times hh:mm on a 24-hour clock) and, where allowed values are \
listed, use one of them exactly.
5. A value that an earlier call returns is written without quotes, as the name of that \
returned argument: #restaurant_name=restaurant_name. The call that returns it must come before; \
a call may use values returned by several earlier calls.
6. No argument has a default value: each required argument comes from the user or from an \
earlier call.
7. Today is {TODAY} (a Friday). Work out dates the user gives relative to today ("next \
Tuesday", "the 12th") from it.

For example, with an app Shop whose API buyitem needs the item_id that finditem returns:
Shop: [item_id, price = finditem(#city='Paris', #name='desk lamp')]
Shop: [order_id, total = buyitem(#item_id=item_id, #quantity='2')]"""

PLAN_TEMPLATE = """\
You plan the API calls that carry out a user's request, using the apps and APIs listed below.

{rules}

{catalog}
{demos}
The user's request:
{input_block}
{marker}"""

DEMOS_INTRO = """
Solved requests of the same kind, for reference (each gives the request and its calls):
{blocks}
"""

DEMO_TEMPLATE = """\
Request: {instruction}
Calls:
{calls}"""

REPAIR_TEMPLATE = """\
You plan the API calls that carry out a user's request, using the apps and APIs listed below.

{rules}

{catalog}

The user's request:
{input_block}

Your previous plan for this request was:
{plan}

Running it on the apps gave these errors:
{errors}

Fix the errors and keep what was right. Give every call of the plan, not only the changed ones.
{marker}"""


def render_app_list(catalog: Catalog) -> str:
    """One line per app: ``- Name: description`` (the app-selection list)."""
    return "\n".join(f"- {name}: {spec.desc}" for name, spec in catalog.apps.items())


def render_arg(name: str, arg: ArgSpec) -> str:
    """``name (type, format; allowed values): description``.

    >>> from tooleval_agents.appbench.records import ArgSpec
    >>> render_arg("time", ArgSpec(type="time", desc="Reservation time"))
    'time (time, hh:mm, 24-hour): Reservation time'
    >>> render_arg("seats", ArgSpec(type="int", desc="Seats", values=["1", "2", "3", "4"]))
    'seats (int; 1 to 4): Seats'
    """
    kind = arg.type + (f", {_FORMATS[arg.type]}" if arg.type in _FORMATS else "")
    if arg.values:
        kind += (f"; {arg.values[0]} to {arg.values[-1]}" if _is_range(arg.values)
                 else "; one of: " + ", ".join(arg.values))
    return f"{name} ({kind}): {arg.desc}"


def _is_range(values: list[str]) -> bool:
    """Whether the values are three or more consecutive integers (shown as ``a to b``)."""
    if len(values) < 3 or not all(v.isdigit() for v in values):
        return False
    numbers = [int(v) for v in values]
    return numbers == list(range(numbers[0], numbers[-1] + 1))


def _arg_lines(title: str, args: dict[str, ArgSpec]) -> list[str]:
    if not args:
        return [f"    {title}: none"]
    return [f"    {title}:"] + [f"      - {render_arg(n, a)}" for n, a in args.items()]


def render_api(name: str, api: ApiSpec) -> str:
    """An API: its purpose, required and optional inputs, returned arguments."""
    effect = " (makes a booking or payment)" if api.is_transactional else ""
    lines = [f"  API {name}: {api.desc}{effect}"]
    lines += _arg_lines("required", api.required)
    lines += _arg_lines("optional", api.optional)
    lines += _arg_lines("returns", api.results)
    return "\n".join(lines)


def render_catalog(catalog: Catalog, apps: Iterable[str] | None = None) -> str:
    """The apps (all, or the named ones in catalog order) with every API of each."""
    wanted = set(catalog.apps) if apps is None else set(apps)
    blocks = [f"App {name}: {spec.desc}\n" + "\n".join(render_api(a, s)
                                                       for a, s in spec.apis.items())
              for name, spec in catalog.apps.items() if name in wanted]
    return "Apps and their APIs:\n\n" + "\n\n".join(blocks)


__all__ = [
    "DEMOS_INTRO",
    "DEMO_TEMPLATE",
    "PLAN_MARKER",
    "PLAN_RULES",
    "PLAN_TEMPLATE",
    "REPAIR_MARKER",
    "REPAIR_TEMPLATE",
    "SELECT_MARKER",
    "SELECT_TEMPLATE",
    "TODAY",
    "render_api",
    "render_app_list",
    "render_arg",
    "render_catalog",
]
