"""Secrets in model parameters and environment values: what is masked in a run's files and
output, and what is left alone."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from helpers import SECRET

from tooleval_agents.results.rescore import rescore_run
from tooleval_agents.results.rundir import EXAMPLES


def test_model_params_drop_transport_and_register_header_values() -> None:
    from langchain_openai import ChatOpenAI

    from tooleval_agents.redaction import is_secret_name, model_params, redact_text

    header = f"sub-{uuid.uuid4().hex[:12]}"
    query = uuid.uuid4().hex
    password = f"pw{uuid.uuid4().hex[:8]}"
    model = ChatOpenAI(model="gpt-4o-mini", api_key=SECRET,
                       base_url=f"http://user:{password}@127.0.0.1:9/v1?code={query}",
                       default_headers={"Ocp-Apim-Subscription-Key": header,
                                        "Content-Type": "application/json"},
                       default_query={"code": query})
    params = model_params(model)
    text = json.dumps(params)
    for secret in (SECRET, header, query, password):
        assert secret not in text
    assert "default_headers" not in params and "default_query" not in params
    assert params["openai_api_base"] == "http://127.0.0.1:9/v1"
    assert params["model_name"] == "gpt-4o-mini"
    # Registered: masked wherever they show up later (errors, stored outputs).
    for secret in (header, query, password):
        assert secret not in redact_text(f"401 for key {secret}", shapes=False)
    assert redact_text("application/json", shapes=False) == "application/json"
    for name in ("Ocp-Apim-Subscription-Key", "X-Auth", "auth", "my_key", "x-goog-api-key",
                 "Cookie", "OPENAI_API_KEY"):
        assert is_secret_name(name), name
    for name in ("author", "monkey", "keyboard", "max_tokens", "input_tokens", "model"):
        assert not is_secret_name(name), name


def test_env_values_that_are_not_key_like_are_never_masked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tooleval_agents.redaction import known_secrets, redact

    key = uuid.uuid4().hex
    monkeypatch.setenv("FOO_API_KEY", "Seattle")
    monkeypatch.setenv("BAR_SECRET", "my-default-region")
    monkeypatch.setenv("BAZ_API_KEY", key)
    secrets = known_secrets()
    assert "Seattle" not in secrets and "my-default-region" not in secrets
    assert key in secrets
    outputs = {"prediction": f"getweather(city='Seattle') my-default-region {key}"}
    clean = redact(outputs, shapes=False, names=False)
    assert clean["prediction"] == "getweather(city='Seattle') my-default-region <redacted>"


def test_run_outputs_are_not_altered_by_word_valued_env_keys(
        tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FOO_API_KEY=Seattle used to turn 'Seattle' in stored outputs into '<redacted>', so a
    re-score of the stored outputs differed from the run's own score."""
    from tooleval_agents.run.runner import run_experiment

    monkeypatch.setenv("FOO_API_KEY", "Seattle")
    summary = run_experiment("appbench", task="plan", subset="ss", model="reference",
                             out=tmp_path / "runs", data_dir=samples, upload=False,
                             progress=False, cache=False)
    run = tmp_path / "runs" / summary.experiment
    stored = (run / EXAMPLES).read_text(encoding="utf-8")
    assert "Seattle" in stored and "<redacted>" not in stored
    rescored = rescore_run(run, write=False)
    assert rescored.changed == 0 and rescored.metrics == summary.metrics
