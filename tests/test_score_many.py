"""``tooleval score BENCH`` over several prediction files in one call: one result per file,
the same numbers as one call per file, globs, a broken file among good ones (reported, the
others scored, exit 1), bad arguments in one line (exit 2).

Most tests use the bundled samples (``datasets/``, always there); the ones over the published
UltraTool predictions skip without the real data (the ``shared_data`` fixture says why)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import typer
from helpers import cli

from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.cli.prediction_files import prediction_files
from tooleval_agents.data.predictions import score_predictions
from tooleval_agents.evaluators.appbench.parse import gold_answer
from tooleval_agents.registry import get_benchmark
from tooleval_agents.ultratool.loaders import load_task
from tooleval_agents.ultratool.paths import prediction_split

PUBLISHED = Path("ultratool") / "predictions"


invoke = partial(cli, "score")
"""``tooleval score ARGS``."""


def ultratool_files(samples: Path, root: Path) -> list[Path]:
    """Answers to the bundled UltraTool samples laid out as upstream publishes them: gold
    and empty answers, tool usage and its awareness, both languages."""
    files = []
    for lang, folder in (("en", "English-dataset"), ("zh", "Chinese-dataset")):
        for task in ("tool_usage", "tool_usage_awareness"):
            records = load_task(samples, task, lang)
            for model, answers in (
                    ("gold", [json.dumps(r.official()["reference"], ensure_ascii=False)
                              for r in records]),
                    ("empty", [""] * len(records))):
                path = root / folder / model / f"{task}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")
                files.append(path)
    return files


def without_file_keys(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in ("predictions", "error")}


def test_several_files_give_the_numbers_of_one_call_each(samples: Path, tmp_path: Path) -> None:
    files = ultratool_files(samples, tmp_path / "preds")
    args = [a for f in files for a in ("--predictions", f)]
    many = invoke("ultratool", *args, "--data-dir", samples, "--json")
    assert many.exit_code == 0, many.output
    entries = json.loads(many.stdout)
    assert [e["predictions"] for e in entries] == [str(f) for f in files]
    for entry, path in zip(entries, files, strict=True):
        task, lang = prediction_split(path)
        assert entry["error"] is None and (entry["task"], entry["lang"]) == (task, lang)
        one = invoke("ultratool", "--task", str(task), "--lang", str(lang), "--predictions",
                     path, "--data-dir", samples, "--json")
        assert one.exit_code == 0, one.output
        assert without_file_keys(entry) == json.loads(one.stdout)  # one object, as before
    gold = [e for e, f in zip(entries, files, strict=True) if f.parent.name == "gold"]
    assert all(e["metrics"]["json_format_rate"] == 100.0 for e in gold)


def test_a_glob_and_the_shell_expanded_form(samples: Path, tmp_path: Path) -> None:
    files = ultratool_files(samples, tmp_path / "preds")
    pattern = str(tmp_path / "preds" / "*" / "gold" / "tool_usage.json")
    quoted = invoke("ultratool", "--predictions", pattern, "--data-dir", samples, "--json")
    assert quoted.exit_code == 0, quoted.output
    matched = sorted(f for f in files if f.parent.name == "gold" and f.stem == "tool_usage")
    assert [e["predictions"] for e in json.loads(quoted.stdout)] == list(map(str, matched))
    # The shell expands an unquoted pattern into paths after the option: the same result.
    expanded = invoke("ultratool", "--predictions", *matched, "--data-dir", samples, "--json")
    assert json.loads(expanded.stdout) == json.loads(quoted.stdout)
    # A pattern is a request for several files: a list even when it matches one.
    single = invoke("ultratool", "--predictions", str(tmp_path / "preds" / "English*" / "gold"
                                                      / "tool_usage.json"),
                    "--data-dir", samples, "--json")
    assert single.exit_code == 0 and len(json.loads(single.stdout)) == 1


def test_options_apply_to_every_file(samples: Path, tmp_path: Path) -> None:
    files = [f for f in ultratool_files(samples, tmp_path / "preds")
             if f.stem == "tool_usage_awareness"]
    result = invoke("ultratool", *[a for f in files for a in ("--predictions", f)],
                    "--lang", "en", "--parser", "official", "--data-dir", samples, "--json")
    assert result.exit_code == 0, result.output
    entries = json.loads(result.stdout)
    # --lang says it for every file, the Chinese folders' too (bare answer arrays carry no
    # record to check them against)
    assert len(entries) == 4 and all(e["parser"] == "official" and e["lang"] == "en"
                                     for e in entries)


def test_a_broken_file_among_good_ones(samples: Path, tmp_path: Path) -> None:
    files = [f for f in ultratool_files(samples, tmp_path / "preds") if f.stem == "tool_usage"]
    broken = tmp_path / "preds" / "English-dataset" / "broken" / "tool_usage.json"
    broken.parent.mkdir()
    broken.write_text('{"index": 0, "output": "x"}\nnot json\n', encoding="utf-8")
    unnamed = tmp_path / "answers.json"  # its path names no task or language
    unnamed.write_text("[]", encoding="utf-8")
    args = ["--predictions", files[0], "--predictions", broken, "--predictions", unnamed,
            "--predictions", files[1], "--data-dir", samples]
    result = invoke("ultratool", *args, "--json")
    assert result.exit_code == 1
    entries = json.loads(result.stdout)
    assert [e["predictions"] for e in entries] == list(map(str, [files[0], broken, unnamed,
                                                                 files[1]]))
    assert entries[0]["error"] is None and entries[3]["error"] is None
    assert entries[1]["error"].startswith("line 2:") and "metrics" not in entries[1]
    assert "pass --task and --lang" in entries[2]["error"]
    assert f"2 of 4 files failed: {broken}, {unnamed}" in result.stderr

    table = invoke("ultratool", *args, "--no-progress")
    assert table.exit_code == 1 and "Traceback" not in table.output
    assert "not scored" in table.stdout and "scored 2 of 4 files" in table.stdout
    rows = [line for line in table.stdout.splitlines() if "English-dataset/broken" in line]
    assert len(rows) == 1 and "line 2" in rows[0]  # reported on its own row


@pytest.mark.parametrize(("args", "message"), [
    (["--predictions", "{tmp}/nothing-*.json"], "no file matches --predictions"),
    (["--predictions", "{tmp}/missing.json"], "no such file"),
    (["--predictions", "{tmp}"], "is a directory"),
    ([], "give --predictions FILE"),
])
def test_bad_arguments_are_one_line_and_exit_2(tmp_path: Path, args: list[str],
                                               message: str) -> None:
    for bench in (["ultratool"], ["appbench", "--category", "ss"]):
        result = invoke(*bench, *[a.format(tmp=tmp_path) for a in args])
        assert result.exit_code == 2, result.output
        assert result.output.strip().count("\n") == 0 and message in result.output


def test_judgments_belong_to_one_file(samples: Path, tmp_path: Path) -> None:
    files = ultratool_files(samples, tmp_path / "preds")
    result = invoke("ultratool", "--predictions", files[0], "--predictions", files[1],
                    "--judgments", files[0], "--data-dir", samples)
    assert result.exit_code == 2 and "score that file on its own" in result.output


def test_appbench_files_in_one_call(samples: Path, tmp_path: Path) -> None:
    answers = [gold_answer(s) for s in load_category(samples, "ss")]
    gold, empty = tmp_path / "gold.json", tmp_path / "empty.json"
    gold.write_text(json.dumps(answers), encoding="utf-8")
    empty.write_text(json.dumps([""] * len(answers)), encoding="utf-8")
    many = invoke("appbench", "--category", "ss", "--predictions", str(tmp_path / "*.json"),
                  "--scoring", "paper", "--data-dir", samples, "--json")
    assert many.exit_code == 0, many.output
    entries = json.loads(many.stdout)
    assert [e["predictions"] for e in entries] == [str(empty), str(gold)]  # sorted matches
    for entry in entries:
        one = invoke("appbench", "--category", "ss", "--predictions", entry["predictions"],
                     "--scoring", "paper", "--data-dir", samples, "--json")
        assert without_file_keys(entry) == json.loads(one.stdout)
    table = invoke("appbench", "--category", "ss", "--predictions", str(tmp_path / "*.json"),
                   "--data-dir", samples)
    assert table.exit_code == 0 and "success" in table.stdout and "gold.json" in table.stdout

    # A file scored by the benchmark's registered scorer from Python: the same figures.
    split = get_benchmark("appbench").split("plan", "ss")
    report = score_predictions(get_benchmark("appbench"), split, gold, samples,
                               options={"scoring": "paper"})
    assert {k: report.metrics[k] for k in ("app_f1", "api_f1", "success")} == \
        {k: entries[1]["metrics"][k] for k in ("app_f1", "api_f1", "success")}
    assert report.counts["missing"] == 0 and report.metrics["success"] == 100.0
    # A file one answer short: the last example scored as empty and counted, not dropped.
    short = tmp_path / "short.jsonl"
    short.write_text("".join(json.dumps({"index": i, "output": a}) + "\n"
                             for i, a in enumerate(answers[:-1])), encoding="utf-8")
    cut = score_predictions(get_benchmark("appbench"), split, short, samples)
    assert (cut.counts["examples"], cut.counts["answered"], cut.counts["missing"]) == (
        len(answers), len(answers) - 1, 1)
    assert cut.metrics["success"] == pytest.approx(100 * (len(answers) - 1) / len(answers))


def test_prediction_files_expand_patterns_once_each(tmp_path: Path) -> None:
    for name in ("b.json", "a.json", "c[1].json"):
        (tmp_path / name).write_text("[]", encoding="utf-8")
    files, several = prediction_files([tmp_path / "b.json"])
    assert files == [tmp_path / "b.json"] and not several
    files, several = prediction_files([tmp_path / "*.json", tmp_path / "a.json"])
    assert files == [tmp_path / n for n in ("a.json", "b.json", "c[1].json")] and several
    # A literal name wins over its glob reading.
    assert prediction_files([tmp_path / "c[1].json"])[0] == [tmp_path / "c[1].json"]
    with pytest.raises(typer.Exit):
        prediction_files([tmp_path / "*.jsonl"])  # a pattern that matches nothing


# --- the published UltraTool predictions ------------------------------------------------------

def test_the_published_files_in_one_call(shared_data: Path) -> None:
    """The 8 key-value files (two tasks x two languages x two models), task and language from
    each path, the official parser for all: the paper's Table 2 numbers, as one call each."""
    pattern = str(shared_data / PUBLISHED / "*" / "*" / "tool_usage*.json")
    result = invoke("ultratool", "--predictions", pattern, "--parser", "official",
                    "--data-dir", shared_data, "--json")
    assert result.exit_code == 0, result.output
    entries = {(e["lang"], Path(e["predictions"]).parent.name, e["task"]): e
               for e in json.loads(result.stdout)}
    assert len(entries) == 8
    awareness = entries[("en", "gpt-4", "tool_usage_awareness")]["metrics"]
    assert round(awareness["tool_usage_awareness_global"], 2) == 62.50
    assert round(entries[("zh", "gpt-3.5", "tool_usage")]["metrics"]["tool_usage"], 2) == 76.26
    path = shared_data / PUBLISHED / "Chinese-dataset" / "gpt-4" / "tool_usage.json"
    one = invoke("ultratool", "--task", "tool_usage", "--lang", "zh", "--predictions", path,
                 "--parser", "official", "--data-dir", shared_data, "--json")
    assert without_file_keys(entries[("zh", "gpt-4", "tool_usage")]) == json.loads(one.stdout)
