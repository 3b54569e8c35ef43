"""Prompts of the AppBench construction pipeline (``tooleval build appbench``), in our own words:
one asks for a single instruction that covers a planning path, the other judges it.

The machine-read parts are wrapped in the tags of :mod:`tooleval_agents.appbench.build_models`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from tooleval_agents.appbench.build_models import (
    APPS,
    CANDIDATE,
    INSTRUCTION,
    PATH_ID,
    VALUES,
    block,
    read_block,
)
from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.appbench.sgd_paths import SgdPath
from tooleval_agents.data.jsonio import parse_json

SCORE_KEYS = ("fluency", "diversity", "consistency")
"""What the judge rates, 1 to 10 each."""

WRITER_SYSTEM = ("You rewrite recorded conversations with a virtual assistant as the single "
                 "request the user could have typed in one go.")

WRITER = """A user talked with a virtual assistant, which called the services listed below to
serve them. Write ONE request in the user's own voice, as a single message sent before any
search was made, that asks for everything these calls do, in their order.

How to write it:
- Every value under "values the user gave" must be in the request. Names (cities, people,
  places, restaurants, films, addresses) are copied exactly as given; dates, times, yes/no
  flags and counts may be written naturally (2019-03-07 as "March 7th" or "next Thursday",
  13:30 as "1:30 pm", True as "with ..."). Today is Friday, March 1st, 2019.
- Values the assistant found or offered (a restaurant it picked, a departure time it
  proposed, a price it quoted) must not appear unless they are among the user's values:
  the request asks for them to be found.
- One paragraph of plain prose, no list, no greeting, no explanation around it.
- Answer with the request between <{tag}> and </{tag}>.

Conversation:
{conversation}

Calls, in order:
{calls}

Values the user gave: {values_block}
Apps: {apps_block}
Path: {path_block}"""

JUDGE_SYSTEM = "You review instructions written for a benchmark of API planning. Be strict."

JUDGE = """An instruction was written for the service calls below. Rate it from 1 (worst) to 10
(best) on each of:
- fluency: reads as something a person would type: grammatical, natural, not a list of slot
  names or a template;
- diversity: worded in its own way, with natural expressions for dates, times and amounts,
  rather than copying argument names and raw values;
- consistency: asks for exactly what the calls do: every given value is there (dates and
  times may be reworded), nothing the calls do not serve is asked, and no value that only
  the calls' results could tell (a chosen restaurant, a departure time) is stated.

Calls, in order:
{calls}

Values the user gave: {values_block}
Path: {path_block}
Instruction: {candidate_block}

Answer with one JSON object and nothing else:
{{"fluency": <1-10>, "diversity": <1-10>, "consistency": <1-10>, "reason": "<one sentence>"}}"""


def conversation_text(path: SgdPath) -> str:
    """The dialogue(s) as ``SPEAKER: text`` lines, joined dialogues one after the other."""
    return "\n".join(f"{turn.speaker}: {turn.text}" for turn in path.turns)


def calls_text(sample: AppBenchSample) -> str:
    """One numbered line per call: ``App.api(k='v', k2=<returned by an earlier call>)``."""
    out = []
    for i, call in enumerate(sample.calls, start=1):
        args = [f"{k}='{v}'" for k, v in sorted(call.literal_args.items())]
        args += [f"{k}=<{v} returned by an earlier call>"
                 for k, v in sorted(call.dependent_args.items())]
        out.append(f"{i}. {call.app}.{call.api}({', '.join(args)})")
    return "\n".join(out)


def literal_values(sample: AppBenchSample) -> dict[str, str]:
    """Literal argument -> value of the path (what the instruction must keep)."""
    return dict(sample.output.user_aware_arguments)


def writer_prompt(path: SgdPath, sample: AppBenchSample) -> str:
    """The instruction-writing prompt for a path (``sample``: its rendered gold)."""
    apps = ", ".join(dict.fromkeys(sample.output.used_app))
    return WRITER.format(
        tag=INSTRUCTION, conversation=conversation_text(path), calls=calls_text(sample),
        values_block=block(VALUES, json.dumps(literal_values(sample), ensure_ascii=False)),
        apps_block=block(APPS, apps), path_block=block(PATH_ID, path.key))


def judge_prompt(path: SgdPath, sample: AppBenchSample, instruction: str) -> str:
    """The quality judge's prompt for an instruction written for a path."""
    return JUDGE.format(
        calls=calls_text(sample),
        values_block=block(VALUES, json.dumps(literal_values(sample), ensure_ascii=False)),
        path_block=block(PATH_ID, path.key), candidate_block=block(CANDIDATE, instruction))


def read_instruction(text: str) -> str:
    """The instruction in the writer's answer (the tagged part, else the whole text); empty
    when there is none."""
    tagged = read_block(INSTRUCTION, text)
    body = tagged if tagged is not None else text
    return " ".join(body.split())


def _objects(text: str) -> Iterator[str]:
    """Each ``{`` to the next ``}``, left to right without overlaps (what the pattern
    ``\\{.*?\\}`` finds, in one pass: the pattern retried every ``{`` that has no ``}``)."""
    at = text.find("{")
    while at >= 0:
        end = text.find("}", at + 1)
        if end < 0:
            return
        yield text[at:end + 1]
        at = text.find("{", end + 1)


def read_scores(text: str) -> tuple[dict[str, float], str] | None:
    """``({fluency, diversity, consistency}, reason)`` from the judge's answer, or ``None``
    when no JSON object holds the three scores as numbers within 1..10."""
    for found in _objects(text):
        if "\\" not in found and not all(key in found for key in SCORE_KEYS):
            continue  # speed: it cannot hold the scores (a key could only hide in an escape)
        try:
            data = parse_json(found)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        scores = {k: float(v) for k in SCORE_KEYS
                  if isinstance(v := data.get(k), int | float) and not isinstance(v, bool)
                  and 1 <= v <= 10}
        if len(scores) == len(SCORE_KEYS):
            return scores, str(data.get("reason", ""))[:300]
    return None
