"""AppBench data contracts: samples, gold call lines, and the app/API catalog."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr

from tooleval_agents.appbench.lines import AppCall, parse_call_line
from tooleval_agents.appbench.names import API_APPS
from tooleval_agents.contracts import RecordMeta


def _check_call_line(line: str) -> str:
    """A gold line must parse: a bad one is reported when the file is loaded, with its place."""
    parse_call_line(line)  # ValueError -> pydantic error at ``api_results.<j>``
    return line


class _Memo:
    """A cache slot: ``key`` -> ``value``. All memos compare equal, so a cached parse never makes
    two equal samples differ."""

    def __init__(self) -> None:
        self.key: object = None
        self.value: Any = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Memo)

    __hash__ = None  # type: ignore[assignment]


class AppBenchOutput(BaseModel):
    """The gold ``output`` object of a sample."""

    model_config = ConfigDict(extra="forbid")

    used_app: list[str]
    """App per call (MM #10 has 5 apps for 7 calls upstream)."""
    used_api: list[dict[str, dict[str, str]]]
    """Per call: ``{api: {arg: concrete value}}``, dependent arguments included."""
    api_results: list[Annotated[str, AfterValidator(_check_call_line)]]
    """Gold call lines ``r1, ... = api(#k='v', ...)``, arguments sorted by name."""
    result_arguments: list[list[str]]
    """Returned-argument names per call."""
    middle_arguments: list[str]
    """Union of all returned arguments."""
    user_aware_arguments: dict[str, str]
    """Every literal (user-provided) argument of the sample."""


class BuildInfo(BaseModel):
    """How ``tooleval build appbench`` made a sample (absent from the official files)."""

    dialogues: list[str]
    """SGD dialogue ids the path comes from, in order."""
    split: str = ""
    """SGD split (train, dev, test)."""
    category: str
    """ss, sm, ms or mm, from the path's app and call counts."""
    scores: dict[str, float] = Field(default_factory=dict)
    """The judge's scores (fluency, diversity, consistency; 1-10); empty with --paths-only."""
    missing_values: list[str] = Field(default_factory=list)
    """Free-text literal values the instruction does not contain (checked without a model)."""
    judge_reason: str = ""
    """The judge's one-line reason."""


class AppBenchSample(BaseModel):
    """A sample of ``test_<category>.json``: a user instruction and its gold plan."""

    model_config = ConfigDict(extra="forbid")

    input: str
    """The user instruction."""
    output: AppBenchOutput
    """Gold plan and arguments."""
    meta: RecordMeta | None = Field(default=None, exclude=True)
    """Where the record was read from (``task`` is the category)."""
    build: BuildInfo | None = Field(default=None, exclude=True)
    """Provenance and quality scores of a built sample (kept out of :meth:`official`)."""
    _calls: _Memo = PrivateAttr(default_factory=_Memo)

    def official(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"meta"})

    @property
    def calls(self) -> list[AppCall]:
        """The gold lines parsed, each with its app (``used_app`` when aligned, else the
        catalog's app of the API, preferring apps this sample uses). Parsed once per content
        of ``used_app``/``api_results``."""
        key = (tuple(self.output.used_app), tuple(self.output.api_results))
        if self._calls.key == key:
            return list(self._calls.value)
        apps = self.output.used_app
        aligned = len(apps) == len(self.output.api_results)
        out: list[AppCall] = []
        for i, line in enumerate(self.output.api_results):
            call = parse_call_line(line)
            app = apps[i] if aligned else None
            if app is None:
                owners = API_APPS.get(call.api, ())
                app = next((a for a in owners if a in apps), owners[0] if owners else None)
            out.append(call.model_copy(update={"app": app}))
        # A fresh slot: ``model_copy`` shares the old one with the copy.
        self._calls = _Memo()
        self._calls.key, self._calls.value = key, out
        return list(out)


class ApiSpec(BaseModel):
    """An API of the catalog. Argument keys look like ``"date_of_journey (date)"`` upstream;
    here they are split into name -> :class:`ArgSpec`."""

    desc: str
    """What the API does."""
    is_transactional: bool
    """Whether it changes state (book, buy, pay)."""
    required: dict[str, ArgSpec]
    """Required arguments."""
    optional: dict[str, ArgSpec]
    """Optional arguments (with SGD default values where given)."""
    results: dict[str, ArgSpec]
    """Returned arguments."""


class ArgSpec(BaseModel):
    """An argument (slot) of an API."""

    type: str = "str"
    """Type tag as in the AppBench catalog (``str``, ``int``, ``date``, ``time``, ``bool``...)."""
    desc: str = ""
    """Description."""
    values: list[str] | None = None
    """Allowed values of a categorical slot, when enumerated."""
    default: str | None = None
    """Default value of an optional slot (SGD ``optional_slots``)."""


class AppSpec(BaseModel):
    """An app of the catalog."""

    desc: str
    """What the app is."""
    apis: dict[str, ApiSpec]
    """API name -> spec."""


class Catalog(BaseModel):
    """The app/API catalog: 15 apps, 33 APIs."""

    apps: dict[str, AppSpec]
    """App name -> spec, in the official order."""

    def api(self, app: str, api: str) -> ApiSpec | None:
        spec = self.apps.get(app)
        return spec.apis.get(api) if spec else None


ApiSpec.model_rebuild()
