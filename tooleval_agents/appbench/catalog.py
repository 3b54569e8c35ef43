"""The AppBench app/API catalog, built from the SGD schemas (CC BY-SA 4.0).

AppBench's 15 apps are SGD services under new names, and its 33 APIs are SGD intents: the mapping
is :data:`API_INTENTS`. Everything else (descriptions, required / optional / result slots, SGD
default values, enumerations) is read from ``<sgd_dir>/{test,dev,train}/schema.json``; only the
type tags (``date``, ``int``...) are added, by the rule of :func:`slot_type`, because SGD has none.

The package ships the result as ``catalog.json`` (with a licence and attribution header) so runs
need no SGD download. Regenerate it with::

    python -m tooleval_agents.appbench.catalog SGD_DIR
"""

from __future__ import annotations

import argparse
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from tooleval_agents.appbench.names import APP_APIS
from tooleval_agents.appbench.records import ApiSpec, AppSpec, ArgSpec, Catalog
from tooleval_agents.data.jsonio import load_json, sha256_file
from tooleval_agents.errors import DataFormatError, DatasetMissingError

SGD_REPO = "https://github.com/google-research-datasets/dstc8-schema-guided-dialogue"
SGD_COMMIT = "e852981ae34990f4358979625854259302feaa78"
"""The SGD commit the shipped catalog was built from (schemas unchanged in later history)."""
LICENSE = "CC BY-SA 4.0"
LICENSE_URL = "https://creativecommons.org/licenses/by-sa/4.0/"
ATTRIBUTION = (
    "Derived from the Schema-Guided Dialogue (SGD) dataset by Google LLC: Rastogi, Zang, "
    "Sunkara, Gupta, Khaitan, 'Towards scalable multi-domain conversational agents: The "
    "schema-guided dialogue dataset', AAAI 2020. Licensed CC BY-SA 4.0; this file is shared "
    "under the same licence."
)
CHANGES = (
    "Kept the 18 services and 33 intents AppBench uses, renamed to AppBench app and API names "
    "(see API_INTENTS in tooleval_agents/appbench/catalog.py); added argument type tags by a "
    "name/description rule; app descriptions join the descriptions of the app's services."
)

SPLITS = ("test", "dev", "train")
"""Schema files searched for a service, in this order (a service in several must be identical)."""

CATALOG_PATH = Path(__file__).with_name("catalog.json")
"""The generated catalog shipped in the package."""

API_INTENTS: dict[str, dict[str, tuple[str, str]]] = {
    "Hotels": {
        "bookhouse": ("Hotels_2", "BookHouse"),
        "searchhouse": ("Hotels_2", "SearchHouse"),
    },
    "Rents": {
        "getcarsavailable": ("RentalCars_3", "GetCarsAvailable"),
        "reservecar": ("RentalCars_3", "ReserveCar"),
        "getride": ("RideSharing_2", "GetRide"),
    },
    "Buses": {
        "findbus": ("Buses_3", "FindBus"),
        "buybusticket": ("Buses_3", "BuyBusTicket"),
    },
    "Events": {
        "findevents": ("Events_3", "FindEvents"),
        "buyeventtickets": ("Events_3", "BuyEventTickets"),
    },
    "Flights": {
        "searchonewayflight": ("Flights_4", "SearchOnewayFlight"),
        "searchroundtripflights": ("Flights_4", "SearchRoundtripFlights"),
    },
    "Homes": {
        "findhomebyarea": ("Homes_2", "FindHomeByArea"),
        "schedulevisit": ("Homes_2", "ScheduleVisit"),
    },
    "Media": {
        "findmovies": ("Media_3", "FindMovies"),
        "playmovie": ("Media_3", "PlayMovie"),
    },
    "Movies": {
        "buymovietickets": ("Movies_1", "BuyMovieTickets"),
        "findmovies": ("Movies_1", "FindMovies"),
        "gettimesformovie": ("Movies_1", "GetTimesForMovie"),
        # Renamed: Movies_3 (a review site) FindMovies; same required (none), optional
        # (directed_by, genre, cast) and result slots (movie_title, percent_rating...).
        "reviewmovies": ("Movies_3", "FindMovies"),
    },
    "Music": {
        "playmedia": ("Music_3", "PlayMedia"),
        "lookupmusic": ("Music_3", "LookupMusic"),
    },
    "Payment": {
        "requestpayment": ("Payment_1", "RequestPayment"),
        "makepayment": ("Payment_1", "MakePayment"),
    },
    "Restaurants": {
        "reserverestaurant": ("Restaurants_2", "ReserveRestaurant"),
        "findrestaurants": ("Restaurants_2", "FindRestaurants"),
    },
    "Services": {
        # Renamed: Services_1 (hair stylists) BookAppointment, slot stylist_name.
        "book_stylist_appointment": ("Services_1", "BookAppointment"),
        # Renamed: Services_1 FindProvider (city, optional is_unisex).
        "find_stylist_provider": ("Services_1", "FindProvider"),
        # Renamed: Services_4 (therapists) BookAppointment, slot therapist_name.
        "book_therapist_appointment": ("Services_4", "BookAppointment"),
        # Renamed: Services_4 FindProvider (city and type of therapist).
        "find_therapist_provider": ("Services_4", "FindProvider"),
    },
    "Trains": {
        "gettraintickets": ("Trains_1", "GetTrainTickets"),
        "findtrains": ("Trains_1", "FindTrains"),
    },
    "Travel": {
        "findattractions": ("Travel_1", "FindAttractions"),
    },
    "Weather": {
        "getweather": ("Weather_1", "GetWeather"),
    },
}
"""App -> API -> (SGD service, SGD intent), in the official app and API order
(:data:`~tooleval_agents.appbench.names.APP_APIS`). Except for the commented renames, the API
name is the intent name lowercased and the app name is the service name without ``_N``
(``Rents`` holds RentalCars_3 and RideSharing_2)."""

_FLOAT_TOKENS = frozenset({"price", "fare", "total", "amount", "rating", "temperature"})


def slot_type(slot: dict[str, Any]) -> str:
    """The type tag of an SGD slot, by this rule (SGD itself has no types):

    1. categorical: values ``True``/``False`` -> ``bool``; only digits (counts, years) -> ``int``;
       other enumerations -> ``str``;
    2. a name word ``date`` -> ``date``; a name ending in ``time`` -> ``time`` (``hh:mm``), except
       a "waiting time", which SGD gives in minutes -> ``int``;
    3. a name word among price, fare, total, amount, rating, temperature -> ``float``;
    4. a name starting with ``number``/``num`` -> ``int``; anything else -> ``str``.

    >>> slot_type({"name": "date_of_journey", "is_categorical": False, "possible_values": []})
    'date'
    """
    values = slot.get("possible_values") or []
    if slot.get("is_categorical") and values:
        if set(values) == {"True", "False"}:
            return "bool"
        return "int" if all(v.isdigit() for v in values) else "str"
    words = str(slot["name"]).split("_")
    if "date" in words:
        return "date"
    if words[-1] == "time":
        return "int" if "waiting time" in str(slot.get("description", "")).lower() else "time"
    if _FLOAT_TOKENS.intersection(words):
        return "float"
    if words[0] in ("number", "num"):
        return "int"
    return "str"


def _arg(slot: dict[str, Any], default: str | None = None) -> ArgSpec:
    values = slot.get("possible_values") or []
    return ArgSpec(type=slot_type(slot), desc=str(slot.get("description", "")),
                   values=list(values) if slot.get("is_categorical") and values else None,
                   default=default)


def _schema_files(sgd_dir: Path) -> list[Path]:
    files = [sgd_dir / split / "schema.json" for split in SPLITS]
    found = [f for f in files if f.is_file()]
    if not found:
        raise DatasetMissingError("sgd", files[0], sgd_dir.parent)
    return found


def _services(files: list[Path]) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Service name -> (schema file, service) over the files; duplicates must agree."""
    out: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path in files:
        data = load_json(path)
        if not isinstance(data, list):
            raise DataFormatError(path, f"expected a JSON array of services, got "
                                        f"{type(data).__name__}")
        for i, service in enumerate(data):
            if not isinstance(service, dict) or "service_name" not in service:
                raise DataFormatError(path, "not a service object", field=f"[{i}]")
            name = service["service_name"]
            if name in out and out[name][1] != service:
                raise DataFormatError(path, f"service {name} differs from the one in "
                                            f"{out[name][0]}", field=f"[{i}]")
            out.setdefault(name, (path, service))
    return out


def _api(path: Path, service: dict[str, Any], intent_name: str) -> ApiSpec:
    name = service["service_name"]
    intent = next((it for it in service.get("intents", []) if it.get("name") == intent_name),
                  None)
    if intent is None:
        raise DataFormatError(path, f"service {name} has no intent {intent_name}")
    slots = {s["name"]: s for s in service.get("slots", [])}

    def slot(slot_name: str) -> dict[str, Any]:
        if slot_name not in slots:
            raise DataFormatError(path, f"{name}.{intent_name} uses undeclared slot "
                                        f"{slot_name!r}")
        return slots[slot_name]

    try:
        return ApiSpec(
            desc=str(intent["description"]),
            is_transactional=bool(intent["is_transactional"]),
            required={s: _arg(slot(s)) for s in intent["required_slots"]},
            optional={s: _arg(slot(s), str(d)) for s, d in intent["optional_slots"].items()},
            results={s: _arg(slot(s)) for s in intent["result_slots"]},
        )
    except (KeyError, AttributeError, TypeError) as exc:
        raise DataFormatError(path, f"malformed intent {name}.{intent_name}: {exc!r}") from exc


def build_catalog(sgd_dir: Path) -> Catalog:
    """Build the 15-app, 33-API catalog from the SGD schemas under ``sgd_dir``.

    Raises:
        DatasetMissingError: no ``schema.json`` under ``sgd_dir/{test,dev,train}``.
        DataFormatError: a mapped service, intent or slot is missing or malformed.
    """
    sgd_dir = Path(sgd_dir)
    files = _schema_files(sgd_dir)
    services = _services(files)
    apps: dict[str, AppSpec] = {}
    for app, api_names in APP_APIS.items():
        apis: dict[str, ApiSpec] = {}
        used: list[str] = []
        for api in api_names:
            service_name, intent_name = API_INTENTS[app][api]
            if service_name not in services:
                raise DataFormatError(files[0], f"service {service_name} (app {app}) is in "
                                                f"none of {[str(f) for f in files]}")
            path, service = services[service_name]
            apis[api] = _api(path, service, intent_name)
            if service_name not in used:
                used.append(service_name)
        desc = "; ".join(str(services[s][1].get("description", "")) for s in used)
        apps[app] = AppSpec(desc=desc, apis=apis)
    return Catalog(apps=apps)


def catalog_document(sgd_dir: Path) -> dict[str, Any]:
    """The shipped file's content: ``{"header": {...}, "apps": {...}}``. The header records the
    source, commit, licence, attribution, changes and the sha256 of each schema file read."""
    sgd_dir = Path(sgd_dir)
    catalog = build_catalog(sgd_dir)
    header = {
        "source": SGD_REPO,
        "commit": SGD_COMMIT,
        "license": LICENSE,
        "license_url": LICENSE_URL,
        "attribution": ATTRIBUTION,
        "changes": CHANGES,
        "schemas": {f.relative_to(sgd_dir).as_posix(): sha256_file(f)
                    for f in _schema_files(sgd_dir)},
        "generated_by": "python -m tooleval_agents.appbench.catalog SGD_DIR",
    }
    return {"header": header, **catalog.model_dump(mode="json", exclude_defaults=True)}


def dumps_catalog(sgd_dir: Path) -> str:
    """The exact text of ``catalog.json`` built from ``sgd_dir``."""
    return json.dumps(catalog_document(sgd_dir), ensure_ascii=False, indent=1) + "\n"


@lru_cache(maxsize=8)
def _load(path: Path | None) -> Catalog:
    if path is None:
        data = load_json(CATALOG_PATH)
        if not isinstance(data, dict) or "apps" not in data:
            raise DataFormatError(CATALOG_PATH, "expected an object with 'header' and 'apps'")
        return Catalog.model_validate({"apps": data["apps"]})
    return build_catalog(path)


def load_catalog(data_dir: Path | None = None) -> Catalog:
    """The catalog: the shipped ``catalog.json`` by default, or built from
    ``<data_dir>/sgd`` when a data directory is given. Cached; do not mutate the result.

    >>> load_catalog().apps["Trains"].apis["findtrains"].required["date_of_journey"].type
    'date'
    """
    return _load(None if data_dir is None else (Path(data_dir) / "sgd").resolve())


def catalog_header() -> dict[str, Any]:
    """The shipped file's header (source, commit, licence, attribution)."""
    header = load_json(CATALOG_PATH).get("header")
    if not isinstance(header, dict):
        raise DataFormatError(CATALOG_PATH, "missing 'header' object")
    return header


def allowed_args(spec: ApiSpec) -> set[str]:
    """Argument names an API accepts: required and optional."""
    return set(spec.required) | set(spec.optional)


def main(argv: list[str] | None = None) -> None:
    """Regenerate ``catalog.json`` from an SGD checkout (or ``--out`` elsewhere)."""
    parser = argparse.ArgumentParser(prog="python -m tooleval_agents.appbench.catalog",
                                     description=main.__doc__)
    parser.add_argument("sgd_dir", type=Path, help="SGD directory holding test/schema.json")
    parser.add_argument("--out", type=Path, default=CATALOG_PATH, help="output file")
    args = parser.parse_args(argv)
    text = dumps_catalog(args.sgd_dir)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text.encode('utf-8'))} bytes)")


if __name__ == "__main__":
    main()
