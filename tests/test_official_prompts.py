"""``--prompts official``: every prompt equals the upstream template filled as the official code
filled it, checked against the fetched upstream files themselves.

The oracles are independent of our reading: UltraTool's own ``generate_prompt_*`` functions and
``evaluation/config.py`` constants, loaded from the (sha-checked) upstream files in the test
only; AppBench's templates as the files hold them, filled with the ``derived/rendered_*.txt``
texts that running the upstream constructors produced.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import runpy
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.contracts import StrategyContext
from tooleval_agents.data.upstream import (
    Name,
    UpstreamError,
    assigned,
    branch,
    concatenation,
    function,
    join,
    literal,
    parse_source,
    upstream_file,
)
from tooleval_agents.evaluators.ultratool.judge.judge import judge_plan, judge_tool
from tooleval_agents.evaluators.ultratool.judge.official import official_judge_prompts
from tooleval_agents.graphs.appbench.official import (
    app_descriptions,
    load_official,
    read_app_classes,
)
from tooleval_agents.graphs.ultratool.official import (
    load_templates,
    official_prompt,
    template_key,
)
from tooleval_agents.registry import get_benchmark, get_strategy, resolve_options
from tooleval_agents.run.runner import run_experiment
from tooleval_agents.ultratool.records import TASKS


class Recorder(BaseChatModel):
    """Records every conversation it is sent and answers with a fixed text."""

    answer: str = "[]"
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recorder"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.answer))])


def _upstream_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("upstream_utils", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the oracle only: imports json, defines functions
    return module


def _fresh(benchmark: str, strategy: str) -> Any:
    # Not the registered object: an official build is remembered on the strategy it ran on.
    return type(get_strategy(benchmark, strategy))()


def _run_strategy(benchmark: str, strategy: str, split: Any, data: Path, inputs: dict[str, Any],
                  answer: str = "[]") -> list[list[BaseMessage]]:
    model = Recorder(answer=answer)
    graph = _fresh(benchmark, strategy).build(StrategyContext(
        model=model, split=split, data_dir=data, options={"prompts": "official"}))
    graph.invoke({"inputs": inputs})
    return model.seen


# --- UltraTool --------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("task", TASKS)
def test_ultratool_prompt_equals_upstream_generate_prompt(shared_data: Path, task: str,
                                                          lang: str) -> None:
    utils = _upstream_module(upstream_file("ultratool", "inference/utils.py", shared_data))
    generate = utils.generate_prompt_english if lang == "en" else utils.generate_prompt_chinese
    # Upstream showed the English demonstration for both languages.
    demo = json.loads((shared_data / "ultratool/data/English-dataset/example"
                       / f"{task}.json").read_text(encoding="utf-8"))
    bench = get_benchmark("ultratool")
    split = bench.split(task, lang)
    lines = bench.locate(split, shared_data).path.read_text(encoding="utf-8").splitlines()
    records = bench.load(split, shared_data)
    for index in (0, 5):  # 5: a toolset whose tools list 'description' before 'type'
        raw = json.loads(lines[index])
        inputs = bench.to_example(split, records[index]).inputs
        [messages] = _run_strategy("ultratool", "one_shot", split, shared_data, inputs)
        assert len(messages) == 1 and messages[0].type == "human"
        assert messages[0].content == generate("few_shot_cot", task, raw, demo), (task, index)


def test_ultratool_official_run_with_reference_scores_100(shared_data: Path,
                                                           tmp_path: Path) -> None:
    summary = run_experiment("ultratool", task="tool_usage", subset="zh", model="reference",
                             prompts="official", limit=5, data_dir=shared_data, out=tmp_path,
                             upload=False, cache=False, progress=False)
    assert summary.counts["ok"] == 5 and summary.metrics["tool_usage"] == 100.0
    config = json.loads((Path(summary.run_dir) / "config.json").read_text(encoding="utf-8"))
    assert config["strategy_options"] == {"prompts": "official"}
    # the prompt set is part of the run's identity: ours is another run
    ours = run_experiment("ultratool", task="tool_usage", subset="zh", model="reference",
                          limit=5, data_dir=shared_data, out=tmp_path, upload=False,
                          cache=False, progress=False)
    assert ours.run_dir != summary.run_dir


def test_ultratool_official_template_follows_the_fields_a_sample_has(shared_data: Path) -> None:
    # Upstream's choice: by the fields present, never by the task's name.
    assert template_key({"question": "q", "toolset": "[t]"}) == "prompt_input_tool"
    assert template_key({"question": "", "toolset": "[t]"}) == "prompt_input"
    assert template_key({"question": "q"}) == "prompt_no_input"
    templates = load_templates(shared_data, "en")
    assert set(TASKS) <= set(templates.instructions)
    assert {"prompt_input_tool", "prompt_input", "prompt_no_input"} <= set(templates.inputs)
    with pytest.raises(UpstreamError, match="the official planning prompt needs"):
        official_prompt(templates, "planning", {"question": "q", "toolset": "[t]"}, {})


def test_ultratool_official_sampling_defaults_and_user_wins() -> None:
    strategy = get_strategy("ultratool", "one_shot")
    assert strategy.model_defaults({"prompts": "official"}) == {"temperature": 0.0,
                                                                "top_p": 1.0}
    assert strategy.model_defaults({}) == {}


# --- UltraTool judge ----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_official_judge_prompts_equal_the_config_templates(shared_data: Path, lang: str) -> None:
    config = runpy.run_path(str(upstream_file("ultratool", "evaluation/config.py", shared_data)))
    key = "en" if lang == "en" else "ch"
    judge = Recorder(answer="[]")
    prompts = official_judge_prompts(shared_data)
    judge_plan(judge, question="Q?", reference="1. a", prediction="noise 1. b", lang=lang,
               max_retries=0, prompt_set=prompts)
    expected = config["language_to_plan_eval_prompt"][key].format(
        question="Q?", reference="1. a", answer="1. b")
    assert judge.seen[0][-1].content == expected
    judge_tool(judge, step="1.1 Add numbers", reference_tool={"name": "add"},
               created_tool={"name": "plus"}, lang=lang, max_retries=0, prompt_set=prompts)
    tool_prompt = judge.seen[1][-1].content
    template = config["language_to_tool_eval_prompt"][key]
    head = template.split("{question}")[0].replace("{{", "{").replace("}}", "}")
    assert tool_prompt.startswith(head) and "Add numbers" in tool_prompt


def test_official_judge_scoring_option_and_identity(shared_data: Path, tmp_path: Path) -> None:
    bench = get_benchmark("ultratool")
    options = bench.scoring_options(bench.split("planning", "en"))
    assert options is not None and "prompts" in options.model_fields
    assert bench.scoring_options(bench.split("tool_usage", "en")) is None
    # --prompts reaches the strategy and the judge's scorer; neither taking one is an error
    strategy, scoring = resolve_options(
        "official", strategy=("one_shot", get_strategy("ultratool", "one_shot").options, None),
        scoring=("planning", options, {}))
    assert strategy == {"prompts": "official"} and scoring == {"prompts": "official"}
    with pytest.raises(ValueError, match="offers no prompt sets"):
        resolve_options("official", strategy=("tools", None, None),
                        scoring=("tool_usage", None, None))
    with pytest.raises(ValueError, match="given twice"):
        resolve_options("official", strategy=("one_shot", get_strategy(
            "ultratool", "one_shot").options, {"prompts": "ours"}), scoring=("x", None, None))


# --- AppBench ----------------------------------------------------------------------------------


def _derived(shared_data: Path) -> dict[str, str]:
    """App -> its ``App: str(dict) \\n\\n `` chunk of the rendered flat text."""
    flat = (shared_data / "appbench/derived/rendered_all_apps_apis_flat.txt").read_text(
        encoding="utf-8")
    chunks = [c for c in flat.split(" \n\n ") if c]
    return {c.split(":", 1)[0]: c + " \n\n " for c in chunks}


def _template(shared_data: Path) -> str:
    return (shared_data / "appbench/code/prompts/appbench/api_for_all_agent.txt").read_text(
        encoding="utf-8")


@pytest.fixture(scope="module")
def mm_sample(shared_data: Path) -> tuple[Any, dict[str, Any], Any]:
    bench = get_benchmark("appbench")
    split = bench.split("plan", "mm")
    record = bench.load(split, shared_data)[3]
    return split, bench.to_example(split, record).inputs, record


def test_appbench_flat_prompt_is_the_template_with_every_app(shared_data: Path,
                                                            mm_sample: Any) -> None:
    split, inputs, _ = mm_sample
    [messages] = _run_strategy("appbench", "flat", split, shared_data, inputs)
    flat = (shared_data / "appbench/derived/rendered_all_apps_apis_flat.txt").read_text(
        encoding="utf-8")
    assert [m.type for m in messages] == ["system", "human"]
    assert messages[0].content == _template(shared_data).format(app_api_list=flat)
    assert messages[1].content == inputs["input"]  # the instruction as the data has it


def test_appbench_hierarchical_prompts_are_the_upstream_ones(shared_data: Path,
                                                            mm_sample: Any) -> None:
    split, inputs, record = mm_sample
    gold_apps = list(dict.fromkeys(record.output.used_app))
    answer = json.dumps(gold_apps)
    select, plan = _run_strategy("appbench", "hierarchical", split, shared_data, inputs, answer)
    # stage 1: the app_instruction literal of MetaAgent.find_required_app, as the file holds it
    source = (shared_data / "appbench/code/agents/meta_agent.py").read_text(encoding="utf-8")
    desc = (shared_data / "appbench/derived/rendered_app_desc_for_app_selection.txt").read_text(
        encoding="utf-8")
    template = load_official(shared_data).select_template
    assert template in source and "{app_desc}" in template
    assert select[0].content == template.format(app_desc=desc)
    assert select[1].content == inputs["input"]
    # stage 2: the planning template with only the selected apps, in upstream's app order
    chunks = _derived(shared_data)
    shown = "".join(chunks[a] for a in chunks if a in gold_apps)
    assert plan[0].content == _template(shared_data).format(app_api_list=shown)


def test_appbench_few_shot_sends_demonstrations_as_turns(shared_data: Path,
                                                        mm_sample: Any) -> None:
    split, inputs, _ = mm_sample
    model = Recorder(answer="")
    graph = _fresh("appbench", "few_shot").build(StrategyContext(
        model=model, split=split, data_dir=shared_data, options={"prompts": "official", "k": 2}))
    graph.invoke({"inputs": inputs})
    [messages] = model.seen
    assert [m.type for m in messages] == ["system", "human", "ai", "human", "ai", "human"]
    pool = get_benchmark("appbench").load(split, shared_data)
    demo = next(s for s in pool if s.input == messages[1].content)
    assert messages[2].content == "".join(
        f"{a}: [{line}] \n" for a, line in zip(demo.output.used_app, demo.output.api_results,
                                               strict=True))
    assert messages[-1].content == inputs["input"] and demo.input != inputs["input"]


@pytest.mark.parametrize("strategy", ["hierarchical", "flat", "few_shot"])
def test_appbench_official_run_with_reference_scores_100(shared_data: Path, tmp_path: Path,
                                                         strategy: str) -> None:
    summary = run_experiment("appbench", subset="sm", strategy=strategy, model="reference",
                             prompts="official", limit=4, data_dir=shared_data, out=tmp_path,
                             upload=False, cache=False, progress=False)
    assert summary.counts["ok"] == 4 and summary.metrics["success"] == 100.0


def test_appbench_app_texts_from_the_app_classes(tmp_path: Path) -> None:
    # Our own two-app stand-in for the upstream layout (the real files are not copied here):
    # the dicts are read as literals, in mobile.py's order, whatever else the files hold.
    apps = tmp_path / "appbench/code/apps"
    apps.mkdir(parents=True)
    (apps / "mobile.py").write_text(
        "from apps.alpha import Alpha\nfrom apps.beta import Beta\n"
        "class Mobile:\n    def __init__(self):\n        self.app_list = ['Beta', 'Alpha']\n"
        "        self.other = compute()\n", encoding="utf-8")
    for name, desc in (("alpha", "first"), ("beta", "second")):
        (apps / f"{name}.py").write_text(
            f"class {name.title()}:\n    def __init__(self):\n"
            f"        self.desc = {{'desc': '{desc}', 'APIs': {{'go': {{'ok': True}}}}}}\n"
            "        self.apis = self.read_all_apis()\n", encoding="utf-8")
    found = read_app_classes(apps / "mobile.py", lambda module: apps / f"{module}.py")
    assert found == {"Beta": {"desc": "second", "APIs": {"go": {"ok": True}}},
                     "Alpha": {"desc": "first", "APIs": {"go": {"ok": True}}}}
    assert list(found) == ["Beta", "Alpha"]
    with pytest.raises(UpstreamError, match="differs from the pinned upstream file"):
        app_descriptions(tmp_path)  # a stand-in is not the pinned file


def test_appbench_missing_app_files_name_the_fetch_command(tmp_path: Path,
                                                          shared_data: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(shared_data / "appbench/code", data / "appbench/code")
    with pytest.raises(UpstreamError, match=r"tooleval data fetch appbench --include "
                                            r"'code/apps/\*'"):
        load_official(data)


# --- reading literals --------------------------------------------------------------------------


def test_literals_are_read_never_run(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "import os\n"
        "def make(method):\n"
        "    TABLE = {'a': 'x{v}', 'b': ('joined ' 'parts')}\n"
        "    if method == 'one':\n"
        "        content = 'no'\n"
        "    elif method == 'two':\n"
        "        content = head + '\\n--\\n' + body\n"
        "    os.system('never')\n"
        "    return content\n", encoding="utf-8")
    fn = function(parse_source(source), "make")
    assert literal(assigned(fn, "TABLE")[0]) == {"a": "x{v}", "b": "joined parts"}
    [two] = [v for stmt in branch(fn, "method", "two") for v in assigned(stmt, "content")]
    parts = concatenation(two)
    assert parts == [Name("head"), "\n--\n", Name("body")]
    assert join(parts, {"head": "H", "body": "B"}) == "H\n--\nB"
    with pytest.raises(UpstreamError, match="which we do not fill"):
        join(parts, {"head": "H"})
    with pytest.raises(UpstreamError, match="not a literal"):
        literal(ast.parse("head", mode="eval").body)  # a name is not a literal
    with pytest.raises(UpstreamError, match="no branch"):
        branch(fn, "method", "three")


def test_a_changed_upstream_file_is_refused(tmp_path: Path, shared_data: Path) -> None:
    copy = tmp_path / "ultratool/inference/utils.py"
    copy.parent.mkdir(parents=True)
    copy.write_bytes((shared_data / "ultratool/inference/utils.py").read_bytes() + b"\n")
    with pytest.raises(UpstreamError, match="tooleval data verify ultratool"):
        upstream_file("ultratool", "inference/utils.py", tmp_path)
    copy.unlink()
    with pytest.raises(UpstreamError, match=r"tooleval data fetch ultratool --data-dir"):
        upstream_file("ultratool", "inference/utils.py", tmp_path)


def test_cli_prompts_errors_are_one_line(tmp_path: Path, shared_data: Path) -> None:
    result = CliRunner().invoke(app, [
        "run", "ultratool", "--task", "tool_usage", "--lang", "en", "--strategy", "tools",
        "--prompts", "official", "--model", "reference", "--limit", "1", "--no-upload",
        "--data-dir", str(shared_data), "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "offers no prompt sets" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(app, [
        "run", "ultratool", "--task", "tool_usage", "--lang", "en", "--prompts", "theirs",
        "--model", "reference", "--limit", "1", "--no-upload", "--data-dir", str(shared_data),
        "--out", str(tmp_path)])
    assert result.exit_code == 2 and "official" in result.output, result.output
