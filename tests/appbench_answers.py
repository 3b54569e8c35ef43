"""A corpus of varied AppBench answers for parity tests of the ``paper`` profile.

AppBench published no model outputs, so the answers are made from each sample's gold plan:
the gold itself (both renderings), the gold with every literal wrong and the last line
dropped, ``noisy-reference`` corruptions (wrong app or API, a missing argument, a mutated
value, a broken dependency, a dropped, added or swapped call), and the gold rewritten in the
shapes real models wrote (``tests/fixtures/real_model``; the issue's official-prompt runs):
bullets and bold app names, placeholder apps (``App``, ``app1``), no returned arguments,
brackets closed before ``=``, argument values without an API name, keys without ``#``,
``App_api`` / ``App.api`` names, double or escaped quotes, short city names, prose, fences
and end-of-turn tokens around the calls, lines cut off, ``\\r\\n`` endings.
Deterministic for a seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence

from tooleval_agents.appbench.records import AppBenchSample
from tooleval_agents.evaluators.appbench.parse import gold_answer, official_gold_answer
from tooleval_agents.models.corruptions import corrupt

_LINE = re.compile(r"^(?P<app>\w+): \[(?P<ret>.*?) = (?P<api>\w+)\((?P<args>.*)\)\]$")
_ARG = re.compile(r"#(\w+)=('[^']*'|\w+)")
_CITIES = {"new york": "NYC", "los angeles": "LA", "san francisco": "SFO", "san diego": "SD"}


def _args(args: str) -> list[tuple[str, str]]:
    return _ARG.findall(args)


def _join(args: Sequence[tuple[str, str]], hash_: str = "#") -> str:
    return ", ".join(f"{hash_}{k}={v}" for k, v in args)


def _styles(rng: random.Random, pool: Sequence[str]) -> list[Callable[[re.Match[str]], str]]:
    """Ways a model wrote one gold line (each from a real answer or an official-prompt run)."""
    def value_edit(m: re.Match[str]) -> str:
        args = _args(m["args"])
        if not args:
            return m[0]
        i = rng.randrange(len(args))
        key, value = args[i]
        plain = value.strip("'")
        edits = [f"'{_CITIES.get(plain.lower(), plain.upper())}'", f"'{plain[:3]}'",
                 key, f"'{plain}, CA'", f"'a={plain}'", f'"{plain}"', f"\\'{plain}\\'",
                 "''", "'?'", f"'{plain} {plain}'"]
        args[i] = (key, rng.choice(edits))
        if rng.random() < 0.2:
            args.insert(rng.randint(0, len(args)), ("extra", "'x'"))
        tail = ", dangling" if rng.random() < 0.2 else ""
        return f"{m['app']}: [{m['ret']} = {m['api']}({_join(args)}{tail})]"

    return [
        lambda m: f"- **{m['app']}**: [{m['ret']} = {m['api']}({m['args']})]",
        lambda m: f"{rng.randint(1, 4)}. {m[0]}",
        lambda m: f"{m['app']} : [{m['ret']} = {m['api']}({m['args']})]",
        lambda m: f"{m['app']}: [{m['api']}({m['args']})]",
        lambda m: f"{m['app']}: [{m['ret']}] = {m['api']}({m['args']})",
        lambda m: f"{m['app']}: [{_join(_args(m['args']), '')}]",
        lambda m: f"{m['app']}: [{m['ret']} = {m['api']}({_join(_args(m['args']), '')})]",
        lambda m: m[0].replace("'", '"'),
        lambda m: f"{m['app']}: [{m['ret']} = {m['app']}_{m['api']}({m['args']})]",
        lambda m: f"{m['app']}: [{m['ret']} = {m['app']}.{m['api']}({m['args']})]",
        lambda m: f"{rng.choice(['App', 'app1', 'app2'])}: [{m['ret']} = {m['api']}("
                  f"{m['args']})]",
        lambda m: m[0].replace(m["app"], m["app"].lower(), 1),
        lambda m: f"{m[0]} # {rng.choice(['done', 'then book', 'see above'])}",
        lambda m: m[0][:rng.randint(len(m[0]) // 2, len(m[0]) - 1)],
        lambda m: f"{m[0]}\r",
        lambda m: f"{m['app']}: [{m['ret'].split(', ')[0]} = {m['api']}({m['args']})]",
        lambda m: rng.choice(pool),
        value_edit, value_edit, value_edit,
    ]


_EXTRA = ["Here are the API calls:", "```", "```python", "Note: [1]", "<|im_end|>", "",
          ": [x]", "Trains: [total] = nothing", "app1: [x='y']", "Thought: [none needed]",
          "USER: [book it]", "Hotels: [", "Weather: []", "API calls: [r = getweather(#city=LA)]"]


def styled(rng: random.Random, sample: AppBenchSample, pool: Sequence[str]) -> str:
    """The gold plan as a model might have written it: some lines restyled, lines added,
    dropped, repeated or shuffled."""
    styles = _styles(rng, pool)
    out = []
    if rng.random() < 0.3:
        out.append(rng.choice(_EXTRA))
    for line in official_gold_answer(sample).split("\n"):
        m = _LINE.match(line)
        r = rng.random()
        if r < 0.08:
            continue
        if m is not None and r < 0.75:
            line = rng.choice(styles)(m)
        out.append(line)
        if rng.random() < 0.08:
            out.append(line)
        if rng.random() < 0.15:
            out.append(rng.choice(_EXTRA))
    if rng.random() < 0.15:
        rng.shuffle(out)
    return ("\r\n" if rng.random() < 0.05 else "\n").join(out)


def wrong(sample: AppBenchSample) -> str:
    """The official gold with every literal upper-cased and suffixed, the last line dropped."""
    lines = official_gold_answer(sample).split("\n")
    return re.sub(r"'([^']*)'", lambda m: f"'{m.group(1).upper()}X'", "\n".join(lines[:-1]))


def answer_sets(samples: Sequence[AppBenchSample], seed: str,
                styled_sets: int = 3) -> Iterator[tuple[str, list[str]]]:
    """``(name, one answer per sample)`` for every kind of answer of the corpus."""
    rng = random.Random(seed)
    pool = [line for s in samples for line in official_gold_answer(s).split("\n")]
    yield "official gold", [official_gold_answer(s) for s in samples]
    yield "gold", [gold_answer(s) for s in samples]
    yield "wrong", [wrong(s) for s in samples]
    for k in range(3):
        yield f"noisy {k}", [corrupt(official_gold_answer(s), "call_lines", rate=1.0,
                                     seed=f"{seed}-{k}") for s in samples]
    for k in range(styled_sets):
        yield f"styled {k}", [styled(rng, s, pool) for s in samples]
