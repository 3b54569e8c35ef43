"""AppBench APIs as simulated, schema-checked stubs: run a plan and see whether it would work.

:class:`AppExecutor` checks each call against the catalog (app, API, required and known
arguments, enumerated values) and against the calls before it (a dependency ``#k=name`` needs an
earlier successful call that returned ``name``; the latest one feeds it). Each failure has a
machine-readable :data:`ErrorKind` and a message a model can act on.

**Results.** Given the sample's gold plan, a call whose API and concrete argument values equal a
gold call's (case, whitespace and quotes ignored) returns that gold call's values, so dependent
values flow as in the real dialogue; other calls return deterministic synthetic values (a hash of
API, arguments and result name, shaped by the slot's type). A gold call's result ``name`` is its
own concrete argument ``name`` when it has one (``findrestaurants`` returns the ``location`` it
was asked for), else the value its first gold consumer passed for it (``findrestaurants``
returns the ``restaurant_name`` that ``reserverestaurant`` then books), else synthetic.

**Gold concrete values.** A gold literal is the gold line's value; a gold dependency's value is
``used_api``'s value for that call when ``used_api`` is aligned with the lines (same length and
API at that index), else the value the gold producer returns.

**Leniency toward the gold data** (documented quirks, see ``tests/test_catalog.py``):

* The catalog is widened by the sample's gold calls: arguments a gold call of the same API uses
  are allowed (MM 169-199 use SGD train-split slots such as ``origin``; MM 16 passes
  ``event_name`` to ``findevents``), required arguments some gold call of the API omits are not
  required, values gold calls use are allowed (``event_type='Sports'``), and names the gold
  calls declare as returns are returned (SS ``success_flag``).
* A call that reproduces a gold call exactly (same app, API, literal values, and the same
  dependencies by name) takes that gold call's concrete values for its dependencies, and a
  dependency the gold plan itself leaves unresolved (MM 12, 36, 49, 58) is accepted for it. The
  gold's own dependencies often carry values that differ from what the producer was given
  (``requestpayment(receiver='Diego')`` then ``makepayment(#receiver=receiver)`` with
  ``receiver`` = Emma in ``used_api``): reproducing the gold plan counts, while a prediction
  that writes a dependency the gold does not write gets the producer's value.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from tooleval_agents.appbench.catalog import allowed_args
from tooleval_agents.appbench.depgraph import dependencies, sources
from tooleval_agents.appbench.names import API_APPS
from tooleval_agents.appbench.records import AppBenchSample, AppCall, ArgSpec, Catalog
from tooleval_agents.tool_faults import MESSAGES as FAULT_ERRORS
from tooleval_agents.tool_faults import FaultSession

ErrorKind = Literal["unknown_app", "unknown_api", "missing_required", "unknown_argument",
                    "invalid_value", "unresolved_dependency", "tool_fault"]
"""Why a call cannot run."""


def normalise(value: str) -> str:
    """A value for comparison: lowercased, outer quotes and whitespace removed, inner whitespace
    collapsed.

    >>> normalise(" 'San  Francisco' ")
    'san francisco'
    """
    return " ".join(value.strip().strip("'\"‘’“”").split()).lower()


class ExecError(BaseModel):
    """One reason a call cannot run."""

    kind: ErrorKind
    """Machine-readable kind."""
    message: str
    """What is wrong and how to fix it, in words a model can act on."""
    argument: str | None = None
    """The argument concerned, if any."""


class CallTrace(BaseModel):
    """One executed call."""

    index: int
    """Position in the plan."""
    call: AppCall
    """The call as given."""
    app: str | None
    """Catalog app it ran against (``None`` when unknown)."""
    args: dict[str, str] = Field(default_factory=dict)
    """Concrete argument values: literals as given, dependencies as resolved."""
    sources: dict[str, int | None] = Field(default_factory=dict)
    """Dependent argument -> index of the earlier call that fed it (``None``: taken from the gold
    call this one reproduces, the gold itself leaving it unresolved)."""
    result: dict[str, str] | None = None
    """Returned values (``None`` when the call failed)."""
    errors: list[ExecError] = Field(default_factory=list)
    """Why the call failed (empty when it ran)."""
    gold_index: int | None = None
    """The gold call this call reached (each gold call is reached at most once)."""

    @property
    def ok(self) -> bool:
        return not self.errors


class ExecutionTrace(BaseModel):
    """Every call of a plan, in order."""

    calls: list[CallTrace] = Field(default_factory=list)
    """One trace per call."""
    gold_calls: int = 0
    """Number of gold calls (0 without gold)."""

    @property
    def ok(self) -> bool:
        """Every call ran."""
        return all(c.ok for c in self.calls)

    @property
    def reached(self) -> int:
        """Distinct gold calls reached by a successful call with the gold's concrete values."""
        return sum(c.gold_index is not None for c in self.calls)

    @property
    def errors(self) -> list[ExecError]:
        return [e for c in self.calls for e in c.errors]


class _Gold(BaseModel):
    """A gold call with its concrete argument values and returned values."""

    index: int
    call: AppCall
    app: str
    args: dict[str, str]
    results: dict[str, str]
    unresolved: set[str]
    """Dependent argument keys the gold plan itself leaves unresolved."""


def _digest(*parts: object) -> int:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], 16)


def synthetic_value(api: str, name: str, args: dict[str, str], spec: ArgSpec | None,
                    seed: int | str = 0) -> str:
    """A deterministic fake value of a result slot, shaped by its catalog type.

    >>> synthetic_value("findtrains", "date_of_journey", {}, ArgSpec(type="date"))[:8]
    '2019-03-'
    """
    h = _digest(str(seed), api, {k: normalise(v) for k, v in args.items()}, name)
    if spec is not None and spec.values:
        return spec.values[h % len(spec.values)]
    kind = spec.type if spec is not None else "str"
    if kind == "int":
        return str(1 + h % 4)
    if kind == "float":
        return f"{20 + h % 400}.00"
    if kind == "bool":
        return "True"
    if kind == "date":
        return f"2019-03-{1 + h % 28:02d}"
    if kind == "time":
        return f"{8 + h % 14:02d}:{15 * (h // 14 % 4):02d}"
    return f"{api}.{name}#{h % 16**6:06x}"


class AppExecutor:
    """Runs AppBench plans against the catalog, optionally with one sample's gold trajectory.

    >>> from tooleval_agents.appbench.catalog import load_catalog
    >>> from tooleval_agents.appbench.lines import parse_call_line as p
    >>> ex = AppExecutor(load_catalog())
    >>> t = ex.execute([p("Restaurants: [x = reserverestaurant(#restaurant_name=name)]")])
    >>> [(e.kind, e.argument) for e in t.errors]
    [('missing_required', 'location'), ('missing_required', 'time'), \
('unresolved_dependency', 'restaurant_name')]
    """

    def __init__(self, catalog: Catalog, gold: AppBenchSample | None = None, *,
                 seed: int | str = 0) -> None:
        self.catalog = catalog
        self.seed = seed
        self._apps = {a.lower(): a for a in catalog.apps}
        self.gold: list[_Gold] = self._gold(gold) if gold is not None else []
        # Catalog widened by the gold calls (see the module doc).
        self._extra_args: dict[tuple[str, str], set[str]] = {}
        self._waived: dict[tuple[str, str], set[str]] = {}
        self._extra_values: dict[tuple[str, str, str], set[str]] = {}
        self._extra_returns: dict[tuple[str, str], set[str]] = {}
        for g in self.gold:
            key = (g.app, g.call.api)
            spec = catalog.api(*key)
            self._extra_args.setdefault(key, set()).update(g.call.arg_names)
            if spec is not None:
                self._waived.setdefault(key, set()).update(set(spec.required) - g.call.arg_names)
            for k, v in g.args.items():
                self._extra_values.setdefault((*key, k), set()).add(normalise(v))
            self._extra_returns.setdefault(key, set()).update(g.call.returns)

    # --- gold trajectory ------------------------------------------------------------------------

    def _gold(self, sample: AppBenchSample) -> list[_Gold]:
        calls = sample.calls
        source = sources(calls)
        unresolved: dict[int, set[str]] = {}
        for i, k, _ in dependencies(calls)[1]:
            unresolved.setdefault(i, set()).add(k)
        used = sample.output.used_api

        def used_values(i: int) -> dict[str, str]:
            aligned = len(used) == len(calls) and calls[i].api in used[i]
            return used[i][calls[i].api] if aligned else {}

        out: list[_Gold] = []
        for i, call in enumerate(calls):
            app = call.app or ""
            args = dict(call.literal_args)
            for k, name in call.dependent_args.items():
                if k in used_values(i):
                    args[k] = used_values(i)[k]
                elif (i, k) in source:
                    args[k] = out[source[i, k]].results.get(name, f"<{name}>")
                else:
                    args[k] = f"<{name}>"
            spec = self.catalog.api(app, call.api)
            names = list(dict.fromkeys([*(spec.results if spec else ()), *call.returns]))
            results = {}
            for name in names:
                consumers = [used_values(j)[k] for (j, k), src in sorted(source.items())
                             if src == i and calls[j].dependent_args[k] == name
                             and k in used_values(j)]
                if name in args:
                    results[name] = args[name]
                elif consumers:
                    results[name] = consumers[0]
                else:
                    results[name] = synthetic_value(call.api, name, args,
                                                    spec.results.get(name) if spec else None,
                                                    self.seed)
            out.append(_Gold(index=i, call=call, app=app, args=args, results=results,
                             unresolved=unresolved.get(i, set())))
        return out

    def _reproduces(self, call: AppCall, app: str, claimed: set[int]) -> _Gold | None:
        """The gold call this call writes exactly (unclaimed ones first)."""
        same = [g for g in self.gold
                if g.app == app and g.call.api == call.api
                and g.call.dependent_args == call.dependent_args
                and {k: normalise(v) for k, v in g.call.literal_args.items()}
                == {k: normalise(v) for k, v in call.literal_args.items()}]
        return next((g for g in same if g.index not in claimed), same[0] if same else None)

    # --- execution ------------------------------------------------------------------------------

    def _resolve_app(self, call: AppCall) -> tuple[str | None, str, list[ExecError]]:
        api = call.api.strip().lower()
        app = call.app
        if "." in api:  # ``Restaurants.findrestaurants``
            prefix, api = api.rsplit(".", 1)
            app = app or prefix
        if app is None:
            owners = API_APPS.get(api, ())
            if len(owners) == 1:
                return owners[0], api, []
            if owners:
                return None, api, [ExecError(kind="unknown_app", message=(
                    f"no app given for {api}; it exists in {', '.join(owners)}: write "
                    f"'App: [... = {api}(...)]'"))]
            return None, api, [ExecError(kind="unknown_api", message=(
                f"no app given and no app has an API named {api!r}"))]
        name = self._apps.get(app.strip().lower())
        if name is None:
            return None, api, [ExecError(kind="unknown_app", message=(
                f"unknown app {app!r}; apps: {', '.join(self.catalog.apps)}"))]
        if api not in self.catalog.apps[name].apis:
            elsewhere = API_APPS.get(api, ())
            hint = f" ({api} belongs to {', '.join(elsewhere)})" if elsewhere else ""
            return name, api, [ExecError(kind="unknown_api", message=(
                f"app {name} has no API {api!r}{hint}; its APIs: "
                f"{', '.join(self.catalog.apps[name].apis)}"))]
        return name, api, []

    def _check_args(self, app: str, api: str, call: AppCall) -> list[ExecError]:
        spec = self.catalog.api(app, api)
        assert spec is not None
        key = (app, api)
        allowed = allowed_args(spec) | self._extra_args.get(key, set())
        errors = [ExecError(kind="unknown_argument", argument=k, message=(
            f"{api} has no argument {k!r}; it accepts: {', '.join(sorted(allowed_args(spec)))}"))
            for k in sorted(call.arg_names - allowed)]
        for k in spec.required:
            if k not in call.arg_names and k not in self._waived.get(key, set()):
                errors.append(ExecError(kind="missing_required", argument=k, message=(
                    f"{api} requires {k!r} ({spec.required[k].desc}); pass it as "
                    f"#{k}='value' or depend on an earlier call returning it")))
        specs = {**spec.optional, **spec.required}
        for k, v in call.literal_args.items():
            arg = specs.get(k)
            if arg is None or not arg.values:
                continue
            ok = {normalise(x) for x in arg.values} | self._extra_values.get((*key, k), set())
            if arg.default is not None:
                ok.add(normalise(arg.default))
            if normalise(v) not in ok:
                errors.append(ExecError(kind="invalid_value", argument=k, message=(
                    f"{api}: {k!r} must be one of {', '.join(arg.values)}; got {v!r}")))
        return errors

    def _returns(self, app: str, api: str) -> list[str]:
        spec = self.catalog.api(app, api)
        names = list(spec.results) if spec else []
        return names + sorted(self._extra_returns.get((app, api), set()) - set(names))

    def execute(self, calls: Sequence[AppCall],
                faults: FaultSession | None = None) -> ExecutionTrace:
        """Run the calls in order; see the module doc for checks, results and leniency.
        ``faults``: the example's seeded tool faults (:mod:`tooleval_agents.tool_faults`), each
        a ``tool_fault`` error of a call to a known API (never given when scoring)."""
        trace = ExecutionTrace(gold_calls=len(self.gold))
        claimed: set[int] = set()
        for i, call in enumerate(calls):
            app, api, errors = self._resolve_app(call)
            done = CallTrace(index=i, call=call, app=app, args=dict(call.literal_args))
            trace.calls.append(done)
            if errors or app is None:
                done.errors = errors
                continue
            fault = faults.draw(f"{app}.{api}", {**call.literal_args, **{
                f"#{k}": v for k, v in call.dependent_args.items()}}) if faults else None
            if fault is not None:
                done.errors = [ExecError(kind="tool_fault", message=f"{api}: " + (
                    fault.message if fault.kind in FAULT_ERRORS
                    else f"the service answered with a {fault.kind} payload"))]
                continue
            errors = self._check_args(app, api, call)
            exact = self._reproduces(call.model_copy(update={"api": api}), app, claimed)
            for k, name in call.dependent_args.items():
                feeder = next((c for c in reversed(trace.calls[:-1])
                               if c.result is not None and name in c.result), None)
                if feeder is None and (exact is None or k not in exact.unresolved):
                    errors.append(self._unresolved(api, k, name))
                    continue
                done.sources[k] = feeder.index if feeder is not None else None
                if exact is not None:
                    done.args[k] = exact.args[k]
                elif feeder is not None and feeder.result is not None:
                    done.args[k] = feeder.result[name]
            if errors:
                done.errors = errors
                continue
            done.result = self._result(app, api, done, claimed)
        return trace

    def _unresolved(self, api: str, key: str, name: str) -> ExecError:
        makers = [f"{a}.{x}" for a, spec in self.catalog.apps.items()
                  for x, s in spec.apis.items() if name in s.results]
        hint = f" (returned by {', '.join(makers)})" if makers else ""
        return ExecError(kind="unresolved_dependency", argument=key, message=(
            f"{api}: #{key}={name} depends on {name!r}, which no earlier successful call "
            f"returns; call an API that returns it first{hint}, or pass a quoted literal"))

    def _result(self, app: str, api: str, done: CallTrace, claimed: set[int]) -> dict[str, str]:
        concrete = {k: normalise(v) for k, v in done.args.items()}
        same = [g for g in self.gold if g.app == app and g.call.api == api
                and {k: normalise(v) for k, v in g.args.items()} == concrete]
        reached = next((g for g in same if g.index not in claimed), None)
        if reached is not None:
            claimed.add(reached.index)
            done.gold_index = reached.index
        gold = reached or (same[0] if same else None)
        spec = self.catalog.api(app, api)
        return {name: gold.results[name] if gold is not None and name in gold.results
                else synthetic_value(api, name, done.args,
                                     spec.results.get(name) if spec else None, self.seed)
                for name in self._returns(app, api)}
