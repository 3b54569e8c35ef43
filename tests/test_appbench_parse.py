"""Reading AppBench model answers: the robust parser (strict) and the official reading (paper)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import WEATHER_GOLD as GOLD
from helpers import weather
from hypothesis import given
from hypothesis import strategies as st

from tooleval_agents.appbench.lines import parse_call_line
from tooleval_agents.appbench.loaders import load_category
from tooleval_agents.appbench.names import CATEGORIES
from tooleval_agents.evaluators.appbench.paper import value_matches
from tooleval_agents.evaluators.appbench.paper_read import extract_call, read_answer
from tooleval_agents.evaluators.appbench.parse import (
    canonical_api,
    gold_answer,
    normalise_value,
    official_gold_answer,
    parse_answer,
)
from tooleval_agents.evaluators.appbench.scoring import score_example


def _fields(call: object) -> tuple[object, ...]:
    return tuple(getattr(call, f) for f in ("app", "api", "returns", "literal_args",
                                            "dependent_args"))


@pytest.mark.parametrize("category", CATEGORIES)
def test_gold_rendered_as_answer_parses_back_to_the_gold_calls(shared_data: Path,
                                                               category: str) -> None:
    for sample in load_category(shared_data, category):  # type: ignore[arg-type]
        parsed = parse_answer(gold_answer(sample))
        assert not parsed.unparsed
        assert [_fields(c) for c in parsed.calls] == [_fields(c) for c in sample.calls]


def test_official_pairing_drops_the_calls_beyond_used_app(shared_data: Path) -> None:
    mm10 = load_category(shared_data, "mm")[10]
    assert len(parse_answer(official_gold_answer(mm10)).calls) == len(mm10.output.used_app) == 5
    assert len(parse_answer(gold_answer(mm10)).calls) == len(mm10.output.api_results) == 7


def test_answer_with_prose_fence_bullets_and_quoting() -> None:
    text = (
        "Sure! To do this I will use two apps.\n\n```text\n"
        "1. **Restaurants**: [restaurant_name, location = findrestaurants("
        "#location=\"San Francisco\", #category='Korean')]\n"
        "- Restaurants: [reserverestaurant(#restaurant_name=restaurant_name, "
        "#name=\"Joe's, Bar\", #note='a, #b')]\n"
        "* `Rents: [ride_fare = getride(#destination='Mcdonald's', #number_of_seats=2)]`\n"
        "```\nLet me know if you need anything else: [nothing].")
    parsed = parse_answer(text)
    assert [(c.app, c.api) for c in parsed.calls] == [
        ("Restaurants", "findrestaurants"), ("Restaurants", "reserverestaurant"),
        ("Rents", "getride")]
    first, second, third = parsed.calls
    assert first.returns == ["restaurant_name", "location"]
    assert first.literal_args == {"location": "San Francisco", "category": "Korean"}
    assert second.returns == []  # missing returned-argument list tolerated
    assert second.dependent_args == {"restaurant_name": "restaurant_name"}
    assert second.literal_args == {"name": "Joe's, Bar", "note": "a, #b"}
    assert third.literal_args == {"destination": "Mcdonald's", "number_of_seats": "2"}
    # Prose brackets are not call attempts: no catalog app, no call syntax (an unparsed piece
    # counts as a wrong call under strict scoring, so prose must not become one).
    assert parsed.unparsed == []


def test_several_calls_on_a_line_plain_and_bare_forms() -> None:
    parsed = parse_answer(
        "Hotels: [a = searchhouse(#where_to='Paris')], Travel: [b = findattractions("
        "#location='Paris')]\nWeather: t = getweather(#city='Paris')\n"
        "x = findrestaurants(#location='Paris')\nI would call foo(bar) here.")
    assert [(c.app, c.api) for c in parsed.calls] == [
        ("Hotels", "searchhouse"), ("Travel", "findattractions"), ("Weather", "getweather"),
        (None, "findrestaurants")]
    assert parsed.unparsed == []


def test_truncated_answer_and_unparseable_lines_are_recorded() -> None:
    parsed = parse_answer("Buses: [x = findbus(#from_city='Fresno', #to_city='Reno'\n"
                          "Hotels: [searchhouse #where_to='Paris']\nfoo(#x=")
    assert [c.api for c in parsed.calls] == ["findbus"]
    assert parsed.calls[0].literal_args == {"from_city": "Fresno", "to_city": "Reno"}
    assert parsed.unparsed == ["Hotels: [searchhouse #where_to='Paris']", "foo(#x="]


@pytest.mark.parametrize("bad", [None, 3, b"Hotels: [a = searchhouse()]", "", "\n\n```\n```"])
def test_non_text_and_empty_answers_give_no_calls(bad: object) -> None:
    assert parse_answer(bad).calls == []


@given(st.text())
def test_parse_answer_never_raises_on_arbitrary_text(text: str) -> None:
    parsed = parse_answer(text)
    assert all(c.api for c in parsed.calls)
    for api in read_answer(text)[1]:
        extract_call(api)


_FRAGMENTS = st.sampled_from(["Hotels", ": [", "]", "(", ")", "#k=", "'", '"', ", ", " = ",
                              "searchhouse", "x", "\n", "```", "- ", "’", "\\'", "=", "#"])


@given(st.lists(_FRAGMENTS, max_size=40).map("".join))
def test_parse_answer_never_raises_on_call_like_text(text: str) -> None:
    parse_answer(text)
    for api in read_answer(text)[1]:
        extract_call(api)


def test_line_parser_extensions() -> None:
    dotted = parse_call_line("Restaurants: [a = Restaurants.findrestaurants(#city='LA');]")
    assert dotted.api == "Restaurants.findrestaurants" and dotted.literal_args == {"city": "LA"}
    escaped = parse_call_line(r"Restaurants: [a = findrestaurants(#name='Joe\'s', #b=“x”)]")
    assert escaped.literal_args == {"name": "Joe's", "b": "x"}


def test_canonical_names_and_values() -> None:
    assert canonical_api("Restaurants.FindRestaurants") == "findrestaurants"
    assert canonical_api("restaurants_findrestaurants") == "findrestaurants"
    assert canonical_api("Services_book_stylist_appointment") == "book_stylist_appointment"
    assert canonical_api("book_stylist_appointment") == "book_stylist_appointment"
    assert canonical_api("myapp_dothing", "MyApp") == "dothing"
    assert normalise_value('  "New   York" ') == "new york"


def test_paper_reading_counts_what_the_official_driver_counts() -> None:
    """Every ``Word: [...]`` line and every line holding ``:``, ``[`` and ``]`` is a predicted
    app and API string, whether or not an API name can be read from it; the name needs a
    returned-argument list, is cut at ``_``; args split on ", " then "=", ``#`` added."""
    apps, apis = read_answer(
        "Restaurants: [findrestaurants(#location='SF')]\n"
        "Restaurants: [a = Restaurants_FindRestaurants(#Location='SF', #name='A, B')]\n"
        "Services: [a = book_stylist_appointment(#x=1)]\n"
        "- just prose\nNote: [1]\n- **Hotels**: [b = searchhouse(where_to='Paris')] ok\n"
        "app1: [x='y']\nTrains: [total] = nothing")
    assert apps == ["Restaurants", "Restaurants", "Services", "Note", "- **Hotels**", "app1",
                    "Trains"]
    calls = [extract_call(a) for a in apis]
    assert [c.name if c else "" for c in calls] == ["", "findrestaurants", "stylist", "",
                                                    "searchhouse", "", ""]
    # "'A, B'" splits into "#name='A" and "B'": a piece without "=" blanks the previous key
    assert calls[1] is not None and calls[1].args == {"#location": "'SF'", "#name": ""}
    assert calls[4] is not None and calls[4].args == {"#where_to": "'Paris'"}
    assert extract_call("a = f(#k='x=y', #j='1', dangling)") == ("f", {"#j": ""})


def test_paper_value_check() -> None:
    assert value_matches("'NYC'", "'New York'", None)
    assert value_matches("'LA'", "'Los Angeles'", None)
    assert value_matches("'San Francisco'", "'San Francisco, CA'", None)  # substring
    assert value_matches("'Korean'", "category", "korean")  # user-aware literal for the key
    assert not value_matches("'2019-03-05'", "'2019-03-06'", "2019-03-01")
    assert value_matches("''", "'anything'", None)  # empty is a substring: official quirk


def test_calls_drafted_while_reasoning_are_not_read() -> None:
    answer = parse_answer("<think>maybe Hotels: [a = bookhouse(#where_to='X')]</think>\n"
                          "Hotels: [address = searchhouse(#where_to='Paris')]")
    assert [(c.app, c.api) for c in answer.calls] == [("Hotels", "searchhouse")]
    assert answer.unparsed == []


def test_wrapped_and_comma_separated_calls_are_all_kept() -> None:
    wrapped = parse_answer("Plan: [Restaurants: [name = findrestaurants(#location='SF')]]")
    assert [(c.app, c.api) for c in wrapped.calls] == [("Restaurants", "findrestaurants")]
    assert wrapped.unparsed == []
    assert wrapped.calls[0].raw == "Restaurants: [name = findrestaurants(#location='SF')]"
    listed = parse_answer("[Restaurants: [name = findrestaurants(#location='SF')], "
                          "Restaurants: [reserverestaurant(#restaurant_name=name)]]")
    assert [c.api for c in listed.calls] == ["findrestaurants", "reserverestaurant"]
    assert listed.unparsed == []
    assert score_example(weather(), f"Plan: [{GOLD}]").scores["success"] == 100.0


def test_returned_list_is_identifiers_only() -> None:
    with pytest.raises(ValueError, match="not an API call line"):
        parse_call_line("Weather: [x = getweather(#city='a')")
    call = parse_call_line("a ,b= findbus(#from_city='X')")
    assert call.returns == ["a", "b"]


def test_positional_appbench_argument_is_kept() -> None:
    call = parse_call_line("Weather: [w = getweather('Paris', #date='2024-01-01')]")
    assert call.literal_args == {"date": "2024-01-01"}
    assert call.unparsed == "'Paris'"
    assert parse_call_line("w = getweather(#city='Paris')").unparsed is None
