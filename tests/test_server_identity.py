"""No stale replay (issue 21): a local server restarted with another model file, chat template
or build must not have the old server's answers replayed from the response cache, and a run
directory is not resumed on another server. What the server reports about itself
(``/v1/models``, llama.cpp's ``/props``) keys the cache and the run; a server that reports
nothing is said to be so when answers were replayed."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_langsmith import loopback_only
from fake_openai import FakeOpenAI
from helpers import SAMPLES
from helpers import run as offline_run
from langchain_openai import ChatOpenAI

from tooleval_agents.models.server_identity import probe_server
from tooleval_agents.run.runner import ResumeError

KEY = "sk-local-server-key-7781"
LLAMA_CPP_MODELS = [{"id": "qwen", "object": "model", "created": 1_700_000_000,
                     "owned_by": "llamacpp", "meta": {"n_params": 1_543_714_304,
                                                      "size": 1_117_320_736}}]


def llama_cpp_props(template: str = "{{ messages }}", build: str = "b4500-abc") -> dict[str, Any]:
    return {"model_path": "/models/qwen2.5-coder-1.5b-q4_k_m.gguf", "chat_template": template,
            "build_info": build, "total_slots": 1, "modalities": {"vision": False},
            "default_generation_settings": {"n_ctx": 8192, "id_slot": 0, "params": {
                "temperature": 0.8, "top_k": 40, "seed": 4294967295}}}


@pytest.fixture
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with loopback_only(monkeypatch) as refused:
        yield
    assert refused == [], f"tried to reach {refused}"


def model_for(server: FakeOpenAI) -> ChatOpenAI:
    return ChatOpenAI(model="qwen", base_url=server.base_url, api_key=KEY,
                      max_retries=0)


@pytest.mark.usefixtures("_loopback")
def test_the_probe_reads_the_stable_fields_of_models_and_props() -> None:
    with FakeOpenAI(default="x", api_key=KEY, models=LLAMA_CPP_MODELS,
                    props=llama_cpp_props()) as server:
        identity = probe_server(model_for(server))
        assert server.gets == ["/v1/models", "/props"]  # authorised: the key was sent
        assert identity is not None and identity.informative
        assert identity.model == {"id": "qwen", "owned_by": "llamacpp",
                                  "meta": LLAMA_CPP_MODELS[0]["meta"]}
        assert identity.props["model_path"].endswith(".gguf")
        assert identity.props["build_info"] == "b4500-abc"
        assert len(identity.props["chat_template_sha256"]) == 64
        assert "total_slots" not in identity.props  # not about the answers
        assert identity.props["sampling"] == {"temperature": 0.8, "top_k": 40}
        digest = identity.digest
        server.models = [{**LLAMA_CPP_MODELS[0], "created": 1_800_000_000}]  # per request
        assert probe_server(model_for(server)).digest == digest
        server.props = llama_cpp_props(template="{{ other }}")
        changed = probe_server(model_for(server))
    assert changed is not None and changed.digest != digest
    assert changed.changes(identity.record()) == ["chat template"]
    assert KEY not in json.dumps(identity.record())


def test_the_probe_never_fails_a_run() -> None:
    assert probe_server(ChatOpenAI(model="gpt-4o-mini", api_key="sk-x")) is None
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = probe_server(ChatOpenAI(model="m", api_key="sk-x",
                                   base_url=f"http://127.0.0.1:{port}/v1"))
    assert down is not None and not down.informative and down.model == {} and down.props == {}
    with FakeOpenAI(default="x") as server:  # no /props, an empty model list
        plain = probe_server(model_for(server))
    assert plain is not None and not plain.informative


A_PLAN = "Weather: [forecast = getweather(#city='Seattle')]"
"""A readable answer: the notes asserted are the server's (an unread one adds its own)."""


def run(server: FakeOpenAI, out: Path, cache: Path, **kw: Any) -> Any:
    return offline_run("appbench", SAMPLES, out, subset="ss", strategy="flat",
                       model="openai:qwen",
                       model_kwargs={"base_url": server.base_url, "temperature": 0},
                       limit=2, cache=cache, max_concurrency=1, **kw)


@pytest.mark.usefixtures("_loopback")
def test_a_changed_server_is_asked_again_and_said_to_have_changed(tmp_path: Path) -> None:
    cache = tmp_path / "responses.sqlite"
    with FakeOpenAI(default=A_PLAN, api_key=KEY, models=LLAMA_CPP_MODELS,
                    props=llama_cpp_props()) as server:
        first = run(server, tmp_path / "a", cache)
        asked = len(server.log)
        again = run(server, tmp_path / "b", cache)  # the same server: replayed
        assert len(server.log) == asked and again.counts["cached"] == 2
        assert first.notes == again.notes == []
        server.props = llama_cpp_props(template="{% for m in messages %}{{ m }}{% endfor %}",
                                       build="b4600-def")  # restarted with a fixed template
        fixed = run(server, tmp_path / "c", cache)
        assert len(server.log) == 2 * asked and fixed.counts["cached"] == 0
        [note] = fixed.notes
        assert "changed since its answers were cached (build, chat template)" in note
        assert "not replaying them" in note
        with pytest.raises(ResumeError, match="model server"):
            run(server, tmp_path / "a", cache)  # its examples ran on the old server
    config = json.loads((tmp_path / "c" / Path(fixed.run_dir).name / "config.json").read_text())
    assert config["model"]["server"]["props"]["build_info"] == "b4600-def"
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert KEY.encode() not in stored


@pytest.mark.usefixtures("_loopback")
def test_a_server_that_reports_nothing_is_said_to_be_replayed(tmp_path: Path) -> None:
    cache = tmp_path / "responses.sqlite"
    # llama-cpp-python: the model's id only, no /props
    with FakeOpenAI(default=A_PLAN, models=[{"id": "qwen", "object": "model",
                                                 "owned_by": "me", "permissions": []}]) as server:
        first = run(server, tmp_path / "a", cache)
        replayed = run(server, tmp_path / "b", cache)
        fresh = run(server, tmp_path / "c", False)
    assert first.notes == [] and fresh.notes == []
    [note] = replayed.notes
    assert "2 answer(s) were replayed from the response cache" in note
    assert "reports no chat template or build" in note and "--no-cache" in note
