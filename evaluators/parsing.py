"""Total, safe parsing of model answers: every text yields a parsed value or a typed failure.

UltraTool prompts render their inputs with Python ``str()``, so models answer with JSON *or*
Python literals (single quotes, ``True``/``None``), often inside a code fence, sometimes with
prose around the list, sometimes cut off by the token limit. :func:`parse_list` handles all of
these without ever calling ``eval()``:

1. fast path: the text from the first ``[`` to the last ``]`` as JSON, else as a Python
   literal (re-quoted to JSON when that is exact, else ``ast.literal_eval``); the common case;
2. otherwise a small lexer that knows both quote styles walks each candidate list, re-emits it as
   a Python literal and repairs what it can *outside* string values only: JSON names
   (``true``/``false``/``null``), trailing, missing and full-width commas (and full-width
   colons, brackets and braces ``：［］｛｝``), missing or stray
   closing brackets, unquoted ``<placeholders>``, unescaped apostrophes (lenient second pass),
   truncation (the complete items of a cut-off list are kept, the partial last one dropped) and,
   as a last resort, items that are broken on their own (dropped, the others kept);
3. bare objects (``{"step": ...}`` without a list) are wrapped in a list.

Every repair is recorded in :attr:`ParsedList.repairs`. :func:`parse_list_official` instead
reproduces the official UltraTool post-processing, defects included, for comparing with the
paper. Plans (the ``planning`` task) are numbered text, handled by :func:`parse_plan`.

>>> parse_list("```json\\n[{'step': '1.1 Do it', 'tool': '1'}]\\n```").value
[{'step': '1.1 Do it', 'tool': '1'}]
>>> parse_list("Sorry, I cannot help.").kind
'no_list_found'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tooleval_agents.evaluators.list_lexer import build, load_literal
from tooleval_agents.evaluators.literals import literal_eval_fast

ParseFailureKind = Literal["empty_output", "no_list_found", "invalid_json", "truncated"]
"""Why no list could be read: nothing was answered; no list or object in the text (the model did
not follow the output instructions); a list is there but is not valid JSON / Python even after
repairs; the output was cut off before its first item was complete."""

ErrorKind = Literal[
    "not_following_instructions",
    "incorrect_json_format",
    "redundant_output",
    "incomplete_output",
    "hallucination",
]
"""The paper's five error types (UltraTool §4.5), as far as one example shows them."""

Repair = Literal[
    "surrounding_text",
    "python_literal",
    "json_names",
    "trailing_comma",
    "missing_comma",
    "bracket_repair",
    "quote_repair",
    "truncated_list_closed",
    "truncated_item_dropped",
    "wrapped_object",
    "unquoted_placeholder",
    "fullwidth_punctuation",
    "invalid_item_dropped",
]
"""What had to be done to read an answer (``surrounding_text``: prose or a code fence around the
list was cut away; ``python_literal``: not JSON but a valid Python literal)."""

FAILURE_ERROR_KIND: dict[ParseFailureKind, ErrorKind] = {
    "empty_output": "not_following_instructions",
    "no_list_found": "not_following_instructions",
    "invalid_json": "incorrect_json_format",
    "truncated": "incorrect_json_format",
}
"""Which of the paper's error types a parse failure is."""


class ParsedList(BaseModel):
    """A list read from a model answer."""

    model_config = ConfigDict(frozen=True)

    ok: Literal[True] = True
    """Discriminator: parsing succeeded."""
    value: list[Any]
    """The parsed items (dicts for every UltraTool task; anything the model wrote otherwise)."""
    repairs: tuple[Repair, ...] = ()
    """Repairs applied, in a stable order; empty for a clean JSON / literal answer."""
    truncated: bool = False
    """The list was not closed: the answer was cut off (complete items are kept)."""


class ParseFailure(BaseModel):
    """No list could be read from a model answer."""

    model_config = ConfigDict(frozen=True)

    ok: Literal[False] = False
    """Discriminator: parsing failed."""
    kind: ParseFailureKind
    """Why (see :data:`ParseFailureKind`)."""
    message: str
    """A short human-readable explanation."""

    @property
    def error_kind(self) -> ErrorKind:
        """The paper's error type of this failure."""
        return FAILURE_ERROR_KIND[self.kind]


ParseResult = ParsedList | ParseFailure

_MAX_STARTS = 8  # candidate '[' positions tried by the repairing path (bounds the work on junk)


_REPAIR_ORDER: tuple[Repair, ...] = Repair.__args__  # type: ignore[attr-defined]


def _ordered(repairs: set[str]) -> tuple[Repair, ...]:
    return tuple(r for r in _REPAIR_ORDER if r in repairs)


_FENCE_ONLY = re.compile(r"\s*(?:```[\w-]*)?\s*")


def _extra_text(before: str, after: str) -> bool:
    """Whether there is prose around a list (a bare code fence does not count)."""
    return not (_FENCE_ONLY.fullmatch(before) and _FENCE_ONLY.fullmatch(after))


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


def _has_dict(value: list[Any]) -> bool:
    return any(isinstance(v, dict) for v in value)


_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.S | re.I)


def without_reasoning(text: str) -> str:
    """The answer without a reasoning model's ``<think>...</think>`` blocks (an unclosed one
    runs to the end: the answer was cut off while reasoning).

    >>> without_reasoning("<think>maybe [1]?</think>\\n[2]")
    '\\n[2]'
    """
    return _REASONING.sub("", text) if "<" in text else text


def parse_list(text: Any) -> ParseResult:
    """Read the list a model answered, JSON or Python literal, with repairs; never raises.

    Non-string input (e.g. ``None`` from a failed call) is a failure, and a list is returned as
    is. See the module docstring for the steps.

    >>> parse_list("Here you go: [{\\"step\\": \\"1.1 a\\", \\"tool\\": true,}] Done.").value
    [{'step': '1.1 a', 'tool': True}]
    >>> r = parse_list('[{"step": "1.1 a", "tool": "1"}, {"step": "1.2 b", "to')
    >>> (r.value, r.truncated)
    ([{'step': '1.1 a', 'tool': '1'}], True)
    """
    if isinstance(text, list):
        return ParsedList(value=text)
    if not isinstance(text, str):
        return ParseFailure(kind="empty_output", message=f"no text answer ({type(text).__name__})")
    text = without_reasoning(text)
    if not text.strip():
        return ParseFailure(kind="empty_output", message="empty answer")
    first, last = text.find("["), text.rfind("]")
    if first >= 0 and last > first:
        loaded = load_literal(text[first:last + 1])
        if loaded is not None and isinstance(loaded[0], list):
            # The repairs in _REPAIR_ORDER order (surrounding_text comes first).
            extra = (first > 0 or last < len(text) - 1) and \
                _extra_text(text[:first], text[last + 1:])
            return _parsed_list({"value": loaded[0], "repairs": _FAST_REPAIRS[extra, loaded[1]]})
    return _parse_repairing(text)


# ParsedList(**fields) without the keyword-argument wrapper: the common case of every answer.
_parsed_list = ParsedList.__pydantic_validator__.validate_python
_FAST_REPAIRS: dict[tuple[bool, bool], tuple[Repair, ...]] = {
    (False, False): (), (True, False): ("surrounding_text",),
    (False, True): ("python_literal",), (True, True): ("surrounding_text", "python_literal")}


def _parse_repairing(text: str) -> ParseResult:
    """The slow path of :func:`parse_list`: lex each candidate list and repair it."""
    found: list[tuple[list[Any], set[str], bool]] = []
    any_truncated = False
    starts = [m.start() for _, m in zip(range(_MAX_STARTS), re.finditer(r"[\[［]", text),
                                         strict=False)]
    candidates = [(s, False) for s in starts]
    first_bracket = starts[0] if starts else -1
    brace = min((i for i in (text.find("{"), text.find("｛")) if i >= 0), default=-1)
    if brace >= 0:
        candidates.append((brace, True))
    covered = -1  # lists starting before this index lie inside an earlier candidate
    for start, implicit in candidates:
        if implicit and found:
            break
        if not implicit and start < covered:
            continue  # part of an earlier (broken or truncated) list, not an answer of its own
        attempt: tuple[list[Any], set[str], bool] | None = None
        salvage: tuple[list[Any], set[str], bool] | None = None
        extent = len(text)
        differs = True
        for lenient in (False, True):
            if lenient and not differs:
                break  # every string ended where the lenient pass ends it: the same reading
            built = build(text, start, lenient=lenient, implicit_list=implicit)
            differs = built.lenient_differs
            extent = min(extent, built.end)
            if built.text is None:
                # Only the strict pass tells truncation apart: a lenient string may run on.
                any_truncated |= built.truncated and not lenient
                continue
            repairs = set(built.repairs)
            if implicit:
                repairs.add("wrapped_object")
            if _extra_text(text[:start], "" if built.truncated else text[built.end:]):
                repairs.add("surrounding_text")
            loaded = load_literal(built.text)
            if loaded is None:
                if salvage is None and built.may_hold_dict:
                    # Last resort: keep the items that are valid on their own.
                    values = built.item_values()
                    if _has_dict(values):
                        salvage = (values, repairs | {"invalid_item_dropped"}, built.truncated)
                continue
            if not _is_list(loaded[0]):
                continue
            if (implicit or start != first_bracket) and not _has_dict(loaded[0]):
                continue  # a later list of strings is not the answer (e.g. an argument value)
            # A strict pass that ends "truncated" may have been derailed by an apostrophe
            # (``'9 o'clock'``): the lenient pass wins if it reads a longer list.
            if attempt is None or len(loaded[0]) > len(attempt[0]):
                attempt = (loaded[0], repairs, built.truncated)
            if not built.truncated:
                break
        attempt = attempt or salvage
        covered = max(covered, extent)
        if attempt is not None:
            found.append(attempt)
            if _has_dict(attempt[0]):
                break
    if found:
        value, repairs, truncated = next((f for f in found if _has_dict(f[0])), found[0])
        return ParsedList(value=value, repairs=_ordered(repairs), truncated=truncated)
    if any_truncated:
        return ParseFailure(kind="truncated",
                            message="the answer was cut off before its first complete item")
    if "[" in text or "{" in text:
        return ParseFailure(kind="invalid_json",
                            message="a list is there but is neither JSON nor a Python literal")
    return ParseFailure(kind="no_list_found", message="no list or object in the answer")


# --------------------------------------------------------------------------------------------
# The official post-processing, for reproducing published numbers.
#
# The official scorer rewrites the whole answer text (also *inside* values: "json" is deleted,
# "None" becomes '"None"', Chinese commas become ASCII ones...) and then tries eval() on a
# series of edited variants. Those edits change published scores (e.g. one valid GPT-4 answer
# containing "Postscript: None" fails to parse, Chinese values lose their full-width commas),
# so reproducing the paper needs them. This is a re-implementation of that behaviour with
# ast.literal_eval in place of eval(); use it only to compare with the paper.

OfficialFamily = Literal["aware", "param"]
"""Which official collector: ``aware`` (awareness and selection) or ``param`` (tool usage)."""

ParserMode = Literal["robust", "official"]
"""``robust``: :func:`parse_list` (the default); ``official``: :func:`parse_list_official`."""

_OFFICIAL_EDITS: tuple[tuple[str, str], ...] = (
    ("输出：", ""), ("\n", ""), ("\\_", "_"), ("true", "True"), ("false", "False"),
    ("null", '"null"'), ("None", '"None"'), ("})", "}"), ("，", ","),
    ('}, "step', '}, {"step'), ("# ...", ""),
)
_OFFICIAL_BRACES = tuple(("}" + " " * k + "}", "}}") for k in range(1, 13))
_QUOTE_SWAP: tuple[tuple[str, str], ...] = (
    ("{'", '{"'), ("'}", '"}'), ("', '", '", "'), ("\", '", '\", "'), ("', \"", '", "'),
    ("': '", '": "'), ("': \"", '": "'), ('": \'', '": "'), ("': {", '": {'), ("['", "["),
    ("']", "]"), (", '", ', "'), ("'),", ')",'),
)
_QUOTE_SWAP_AWARE = (*_QUOTE_SWAP, ('""None""', '"None"'), ('"{step', '{"step'),
                     ("')}", ')"}'))
_QUOTE_SWAP_PARAM = (*_QUOTE_SWAP, ("': ", '": '), ("', {", '", {'), ("')}", ')"}'),
                     ('}}," {', "}}, {"), ('""None""', '"None"'))


def _edit(text: str, edits: tuple[tuple[str, str], ...]) -> str:
    for old, new in edits:
        text = text.replace(old, new)
    return text


def official_text(answer: str, family: OfficialFamily) -> str:
    """The official clean-up and cut of an answer (before any parse attempt)."""
    text = _edit(answer.replace("json", "").strip("`"), _OFFICIAL_EDITS)
    if family == "param":
        text = text.replace("}{", "}, {")
    if "} " in text:  # every brace pattern starts with it
        text = _edit(text, _OFFICIAL_BRACES)
    if not text.startswith("["):
        at = text.find("[")
        if at != -1:
            text = text[at:]
    if not text.endswith("]"):
        at = text.rfind("]")
        if at != -1:
            text = text[:at + 1]
        elif "[" in text:
            cut = "}}," if family == "param" else "},"
            at = text.rfind(cut)
            text = text[:at + len(cut) - 1] + "]" if at != -1 else text + "]"
    return text


def _official_variants(t: str, family: OfficialFamily) -> Iterator[str]:
    """The edited variants the official code tries, in its order, each built only when the
    previous one failed to parse."""
    if not t:
        return
    head, last = t[:-1], t[-1]
    yield t
    if family == "aware":
        yield head + "}" + last
        yield head + '"}' + last
        at = t.rfind("},")
        if at != -1 and "[" in t:
            yield t[:at + 1] + "]"
        yield _edit(t, _QUOTE_SWAP_AWARE)
        return
    one = head + "}" + last
    yield one
    yield one[:-1] + "}" + one[-1]
    yield t.replace('"}, {"step', '"}}, {"step')
    yield head + '"}' + last
    yield head + "]}}" + last
    minus = t[:-2] + last
    yield minus
    yield minus[:-2] + minus[-1:]
    yield t.replace("}}}", "}}")
    at = t.rfind("}},")
    if at != -1 and "[" in t:
        yield t[:at + 2] + "]"
    swapped = _edit(t, _QUOTE_SWAP_PARAM)
    if swapped:
        yield swapped
        yield swapped.replace("}}}", "}}")
        yield swapped[:-1] + "]}}" + swapped[-1]


def parse_list_official(text: Any, *, family: OfficialFamily = "aware") -> ParseResult:
    """Read an answer exactly as the official UltraTool scorer does (but with
    ``ast.literal_eval``, never ``eval``); a failure is what upstream counts as bad JSON.

    The value is whatever the first accepted variant evaluates to, adjusted as the official
    metrics treat it: a non-list counts as an empty answer for ``aware``; for ``param`` a
    tuple is iterated like a list and a list whose first item is a list is replaced by it.

    >>> parse_list_official('[{"step": "1.1 None", "tool": "0"}, {"step": "1.2 b", "tool": "1"}]')
    ParseFailure(ok=False, kind='invalid_json', message='no edited variant of the answer parses')
    """
    if isinstance(text, list):
        return ParsedList(value=text)
    if not isinstance(text, str):
        return ParseFailure(kind="empty_output", message=f"no text answer ({type(text).__name__})")
    t = official_text(text, family)
    tried: set[str] = set()
    for variant in _official_variants(t, family):
        if variant in tried:
            continue  # an edit that changed nothing fails as the text did
        tried.add(variant)
        try:
            value = literal_eval_fast(variant)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if family == "param":
            if isinstance(value, tuple):
                value = list(value)
            if isinstance(value, list) and value and isinstance(value[0], list):
                value = value[0]
        return ParsedList(value=value if isinstance(value, list) else [])
    return ParseFailure(kind="invalid_json" if "[" in t else "no_list_found",
                        message="no edited variant of the answer parses")


def parse_answer(text: Any, *, mode: ParserMode = "robust",
                 family: OfficialFamily = "aware") -> ParseResult:
    """:func:`parse_list` (``robust``) or :func:`parse_list_official` (``official``)."""
    if mode == "official":
        return parse_list_official(text, family=family)
    return parse_list(text)


# --------------------------------------------------------------------------------------------
# Plans (the planning task): numbered text, one step per line.

_CHAT_TOKENS = ("<|im_end|>", "<|im_end|", "<|im_start|>", "<|im_start|")
# A step line: an optional bullet, the number -- ``1.2``/``1.2.3`` (then anything but a digit,
# so ``1.1写入`` counts) or a lone ``1`` followed by a dot or a blank (so ``10个`` does not) --,
# an optional dot, then the text, a blank between them or not (``1.创建文件``). The text runs
# to the line's end, its trailing blanks stripped after the match (a lazy ``(\S.*?)\s*$``
# tried the rest of the line after every character: quadratic on a blank run).
_STEP_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?(?>(?P<dotted>\d+(?:\.\d+)+)|(?P<lone>\d+)(?=[.\s]))"
    r"(?P<dot>\.?+)(?!\d)\s*(?P<text>\S.*)$")


class PlanStepText(BaseModel):
    """A numbered line of a plan."""

    model_config = ConfigDict(frozen=True)

    number: tuple[int, ...]
    """Hierarchical number, e.g. ``(1, 2)`` for ``1.2``."""
    label: str
    """The number as written (``1.`` or ``1.2``)."""
    text: str
    """The step text after the number."""
    line: int
    """1-based line in the cleaned plan."""

    @property
    def id(self) -> str:
        """The step id the scorers match on (``1.`` for top-level steps, ``1.2`` below)."""
        return self.label


class ParsedPlan(BaseModel):
    """A plan answer split into numbered steps, with its numbering checked."""

    model_config = ConfigDict(frozen=True)

    ok: Literal[True] = True
    """Discriminator: at least one numbered step was found."""
    text: str
    """The answer as the official judge sees it (see :func:`clean_plan_text`)."""
    steps: list[PlanStepText]
    """Numbered steps in order."""
    unnumbered_lines: int = 0
    """Non-blank lines without a step number (prose or continuation lines)."""
    numbering_problems: list[str] = Field(default_factory=list)
    """Where the hierarchical numbering breaks (first step not 1, skipped or repeated numbers)."""

    @property
    def numbering_valid(self) -> bool:
        """Numbers run 1, 1.1, 1.2, 2, 2.1 ... without gaps, repeats or jumps in depth."""
        return not self.numbering_problems


def clean_plan_text(answer: str) -> str:
    """The official planning clean-up before judging.

    Reasoning blocks (:func:`without_reasoning`) and chat-template tokens are removed (no
    published answer has either); an answer not starting with ``1. `` is cut to start at
    the first ``1. `` and loses a last paragraph that does not start with a digit (a closing
    remark).
    """
    answer = without_reasoning(answer)
    for token in _CHAT_TOKENS:
        answer = answer.replace(token, "")
    if not answer.strip().startswith("1. "):
        at = answer.find("1. ")
        if at != -1:
            answer = answer[at:]
        paragraphs = answer.split("\n\n")
        if len(paragraphs) > 1 and paragraphs[-1] and not paragraphs[-1][0].isdigit():
            answer = "\n\n".join(paragraphs[:-1])
    return answer


def numbering_problems(numbers: list[tuple[int, ...]]) -> list[str]:
    """Breaks in a hierarchical numbering: each number must be the first child of the previous
    one or the next sibling of it or of one of its ancestors (the first must be 1).

    >>> numbering_problems([(1,), (1, 1), (1, 2), (2,), (2, 2)])
    ['2.2 follows 2 (expected 2.1 or 3)']
    """
    problems: list[str] = []
    prev: tuple[int, ...] = ()
    for num in numbers:
        if not _follows(num, prev):
            if prev:
                where = _dotted(prev)
                expected = f"{_dotted((*prev, 1))} or {_dotted((*prev[:-1], prev[-1] + 1))}"
            else:
                where, expected = "the start", "1"
            problems.append(f"{_dotted(num)} follows {where} (expected {expected})")
        prev = num
    return problems


def _follows(num: tuple[int, ...], prev: tuple[int, ...]) -> bool:
    """Whether ``num`` may come after ``prev``: its first child, or the next sibling of it or
    of one of its ancestors (compared at the one depth ``num`` has, not by listing every
    allowed number: a 20,000-part number made that quadratic)."""
    depth = len(num) - 1
    if depth > len(prev) or depth < 0:
        return False
    if depth == len(prev):
        return num[:depth] == prev and num[depth] == 1
    return num[:depth] == prev[:depth] and num[depth] == prev[depth] + 1


def _dotted(number: tuple[int, ...]) -> str:
    return ".".join(map(str, number))


def step_number(label: str) -> tuple[int, ...] | None:
    """``1.2`` -> ``(1, 2)``; None when a part has more digits than ``int()`` reads (4300).

    >>> step_number("1.2"), step_number("1" * 5000)
    ((1, 2), None)
    """
    try:
        return tuple(int(p) for p in label.split("."))
    except ValueError:  # digits beyond int() limits
        return None


def plan_failure_kind(answer: Any) -> ParseFailureKind | None:
    """Why :func:`parse_plan` would fail on ``answer`` (``empty_output``, ``no_list_found``),
    or None when it would find a numbered step; the check alone, for counting failures.

    >>> plan_failure_kind("Sure!\\n1. Book"), plan_failure_kind("No plan."), plan_failure_kind(" ")
    (None, 'no_list_found', 'empty_output')
    """
    if not isinstance(answer, str) or not answer.strip():
        return "empty_output"
    for line in clean_plan_text(answer).splitlines():
        m = _STEP_LINE.match(line)
        if m is not None and step_number(m["dotted"] or m["lone"]) is not None:
            return None
    return "no_list_found"


def parse_plan(answer: Any) -> ParsedPlan | ParseFailure:
    """Split a planning answer into numbered steps; never raises.

    >>> p = parse_plan("Sure!\\n1. Book\\n1.1 Find a hotel\\n1.3 Pay")
    >>> [s.label for s in p.steps], p.numbering_valid
    (['1.', '1.1', '1.3'], False)
    """
    if not isinstance(answer, str) or not answer.strip():
        return ParseFailure(kind="empty_output", message="empty answer")
    text = clean_plan_text(answer)
    steps: list[PlanStepText] = []
    unnumbered = 0
    for i, line in enumerate(text.splitlines(), start=1):
        m = _STEP_LINE.match(line)
        if m is None:
            unnumbered += bool(line.strip())
            continue
        label, dot, body = m["dotted"] or m["lone"], m["dot"], m["text"].rstrip()
        number = step_number(label)
        if number is None:
            unnumbered += 1
            continue
        steps.append(PlanStepText(number=number, label=label + dot, text=body, line=i))
    if not steps:
        return ParseFailure(kind="no_list_found", message="no numbered step in the answer")
    return ParsedPlan(text=text, steps=steps, unnumbered_lines=unnumbered,
                      numbering_problems=numbering_problems([s.number for s in steps]))
