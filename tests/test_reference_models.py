"""The reference model's answer key: content-based lookup and ambiguous inputs."""

from __future__ import annotations

import pytest

from tooleval_agents.contracts import GoldAnswer
from tooleval_agents.models.reference import (
    DEFAULT_NOISE_RATE,
    AnswerKey,
    NoisyReferenceChatModel,
    ReferenceChatModel,
    parse_offline_spec,
)
from tooleval_agents.models.specs import resolve_model


def _gold(text: str) -> list[GoldAnswer]:
    return [GoldAnswer("Select the apps", f"apps for {text}", "app_list"),
            GoldAnswer("Write the calls", f"calls for {text}", "call_lines")]


def test_lookup_by_last_input_block_and_marker() -> None:
    model = ReferenceChatModel(answer_key=AnswerKey.build([("a", _gold("a")), ("b", _gold("b"))]))
    prompt = "Write the calls.\n<example>demo</example>\n<input>\nb\n</input>"
    assert model.invoke(prompt).content == "calls for b"
    assert model.invoke("Select the apps\n<input>a</input>").content == "apps for a"


def test_unknown_input_missing_block_and_marker_fail_clearly() -> None:
    model = ReferenceChatModel(answer_key=AnswerKey.build([("alpha", _gold("alpha"))]))
    with pytest.raises(LookupError, match="unknown example input"):
        model.invoke("Write the calls <input>zzz</input>")
    with pytest.raises(LookupError, match=r"no <input>.*no known example input"):
        model.invoke("Write the calls")
    with pytest.raises(LookupError, match="no stage marker"):
        model.invoke("Something else <input>alpha</input>")


def test_without_input_tags_the_known_input_ending_last_is_the_example() -> None:
    # An official prompt set has no <input> tags: demonstrations (other known inputs) come
    # first, the example's own input last, whatever the lengths.
    key = AnswerKey.build([("a much longer demonstration request", _gold("demo")),
                           ("short request", _gold("own"))])
    model = ReferenceChatModel(answer_key=key)
    prompt = "Write the calls\na much longer demonstration request\nshort request"
    assert model.invoke(prompt).content == "calls for own"


def test_shared_input_with_different_gold_is_refused_not_guessed() -> None:
    key = AnswerKey.build([("same", _gold("x")), ("same", _gold("y")), ("ok", _gold("ok"))])
    model = ReferenceChatModel(answer_key=key)
    with pytest.raises(LookupError, match="several examples share the input"):
        model.invoke("Write the calls <input>same</input>")
    assert model.invoke("Write the calls <input>ok</input>").content == "calls for ok"
    # Identical inputs with identical gold answers are fine.
    same = AnswerKey.build([("d", _gold("d")), ("d", _gold("d"))])
    assert not same.ambiguous


@pytest.mark.parametrize(("spec", "parsed"), [("reference", ("reference", None)),
                                              ("noisy-reference", ("noisy-reference", 0.3)),
                                              ("noisy-reference:0.5", ("noisy-reference", 0.5)),
                                              ("openai:gpt-4o", None)])
def test_parse_offline_spec(spec: str, parsed: object) -> None:
    assert parse_offline_spec(spec) == parsed


def test_rate_out_of_range() -> None:
    with pytest.raises(ValueError, match=r"within 0\.\.1"):
        parse_offline_spec("noisy-reference:1.5")


def test_cache_key_changes_with_the_answers() -> None:
    """LangChain's response cache keys on the model's identifying params: a changed gold answer
    (or another script) must not replay cached answers."""
    from tooleval_agents.models.chat_models import ScriptedChatModel
    from tooleval_agents.models.reference import NoisyReferenceChatModel

    a = ReferenceChatModel(answer_key=AnswerKey.build([("a", _gold("a"))]))
    b = ReferenceChatModel(answer_key=AnswerKey.build([("a", _gold("changed"))]))
    same = ReferenceChatModel(answer_key=AnswerKey.build([("a", _gold("a"))]))
    assert a._get_llm_string() != b._get_llm_string()
    assert a._get_llm_string() == same._get_llm_string()
    noisy = [NoisyReferenceChatModel(answer_key=a.answer_key, rate=r) for r in (0.3, 0.5)]
    assert noisy[0]._get_llm_string() != noisy[1]._get_llm_string()
    s1 = ScriptedChatModel(rules=[("x", "one")])
    s2 = ScriptedChatModel(rules=[("x", "two")])
    assert s1._get_llm_string() != s2._get_llm_string()


def test_update_keeps_ambiguous_inputs() -> None:
    key = AnswerKey()
    key.update(AnswerKey.build([("same", _gold("x")), ("same", _gold("y"))]))
    with pytest.raises(LookupError, match="several examples share the input"):
        ReferenceChatModel(answer_key=key).invoke("Write the calls <input>same</input>")


@pytest.mark.parametrize("spec", ["noisy-reference:", "noisy-reference:0,3", "reference:0.3",
                                  "noisy-reference:abc"])
def test_malformed_offline_specs_are_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="noisy-reference:RATE"):
        parse_offline_spec(spec)
    with pytest.raises(ValueError, match="noisy-reference:RATE"):
        resolve_model(spec, answer_key=AnswerKey())


def test_one_default_noise_rate() -> None:
    assert parse_offline_spec("noisy-reference") == ("noisy-reference", DEFAULT_NOISE_RATE)
    model = resolve_model("noisy-reference", answer_key=AnswerKey())
    assert isinstance(model, NoisyReferenceChatModel) and model.rate == DEFAULT_NOISE_RATE
    assert NoisyReferenceChatModel().rate == DEFAULT_NOISE_RATE
