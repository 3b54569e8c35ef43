"""The 15 AppBench apps and their 33 APIs, by name, in the official ``Mobile.app_list`` order.

Names are facts of the benchmark; the full catalog (descriptions, arguments) is built from the SGD
schemas by :mod:`tooleval_agents.appbench.catalog`.
"""

from __future__ import annotations

from typing import Literal

Category = Literal["ss", "sm", "ms", "mm"]
"""single app / single API, single app / multiple APIs, multiple apps / single API each,
multiple apps / multiple APIs."""
CATEGORIES: tuple[Category, ...] = ("ss", "sm", "ms", "mm")

APP_APIS: dict[str, tuple[str, ...]] = {
    "Hotels": ("bookhouse", "searchhouse"),
    "Rents": ("getcarsavailable", "reservecar", "getride"),
    "Buses": ("findbus", "buybusticket"),
    "Events": ("findevents", "buyeventtickets"),
    "Flights": ("searchonewayflight", "searchroundtripflights"),
    "Homes": ("findhomebyarea", "schedulevisit"),
    "Media": ("findmovies", "playmovie"),
    "Movies": ("buymovietickets", "findmovies", "gettimesformovie", "reviewmovies"),
    "Music": ("playmedia", "lookupmusic"),
    "Payment": ("requestpayment", "makepayment"),
    "Restaurants": ("reserverestaurant", "findrestaurants"),
    "Services": (
        "book_stylist_appointment",
        "find_stylist_provider",
        "book_therapist_appointment",
        "find_therapist_provider",
    ),
    "Trains": ("gettraintickets", "findtrains"),
    "Travel": ("findattractions",),
    "Weather": ("getweather",),
}

API_APPS: dict[str, tuple[str, ...]] = {}
for _app, _apis in APP_APIS.items():
    for _api in _apis:
        API_APPS[_api] = (*API_APPS.get(_api, ()), _app)
# ``findmovies`` belongs to both Media and Movies; every other API names one app.


# Tool names (here, not in ``tools``, so metrics can name tools without importing LangChain).
SEPARATOR = "__"
OPEN_PREFIX = "open_"


def tool_name(app: str, api: str) -> str:
    """``Restaurants__findrestaurants``."""
    return f"{app}{SEPARATOR}{api}"


def open_tool_name(app: str) -> str:
    """``open_Restaurants``."""
    return f"{OPEN_PREFIX}{app}"


def split_tool_name(name: str) -> tuple[str | None, str]:
    """``(app, api)`` of a tool name (``(None, name)`` when it has no app part)."""
    app, sep, api = name.partition(SEPARATOR)
    return (app, api) if sep and app and api else (None, name)
