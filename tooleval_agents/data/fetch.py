"""Download the pinned upstream benchmark files and check them against the manifest.

The manifest (:func:`load_manifest`) gathers what each registered benchmark pins
(:meth:`~tooleval_agents.registry.Benchmark.data_sources`; the built-ins ship theirs as
``sources.json`` in their package): per source, a repository, a commit and every file we use
with its size and sha256. Files land in ``<data_dir>/<source>/<path>``, the layout of
:mod:`tooleval_agents.data.datadir`, where ``path`` is the path inside the upstream repository.

Where files come from is a URL template with the placeholders ``{repo}``, ``{commit}``,
``{source}`` and ``{path}``; the default is GitHub's raw content. A base URL without
placeholders is a mirror laid out like a data directory: ``<base>/<source>/<path>``, so
``python -m http.server -d DATA_DIR`` on another machine serves a valid mirror. The URL must be
``http://`` or ``https://``; credentials in it (``https://user:pass@host/...``) are sent as HTTP
basic auth and removed from every URL the reports and errors show.

Downloading is :func:`tooleval_agents.data.download.fetch` (apart, so commands that only read the
manifest do not import the HTTP client). Example::

    >>> report = fetch("appbench", "/tmp/data", progress=False)  # doctest: +SKIP
    >>> [f.status for f in report.files]  # doctest: +SKIP
    ['downloaded', 'downloaded', 'downloaded', 'downloaded']
"""

from __future__ import annotations

import os
import string
from collections.abc import Iterable
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Literal
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.data.jsonio import first_error, sha256_file
from tooleval_agents.data.paths import PathEscapeError, check_relative
from tooleval_agents.errors import ToolevalError
from tooleval_agents.redaction import register_secret
from tooleval_agents.registry import ManifestFile, SourceManifest, benchmarks

SourceName = str
"""A source of the manifest (one pinned upstream repository)."""
DEFAULT_BASE_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
BASE_URL_ENV = "TOOLEVAL_FETCH_BASE_URL"
"""Environment variable overriding :data:`DEFAULT_BASE_URL` (``--base-url`` beats it)."""
PLACEHOLDERS = frozenset({"repo", "commit", "source", "path"})

RETRIES = 3
"""Extra attempts after a transient failure (timeout, connection reset, HTTP 5xx/429)."""
BACKOFF = 1.0
"""Seconds before the first retry; doubled for each further one."""


# ---------------------------------------------------------------------------------------------
# Manifest


MANIFEST_DESCRIPTION = ("Pinned upstream files that 'tooleval data fetch' downloads. Each path "
                        "is relative to the repository root at the pinned commit and to "
                        "<data_dir>/<source>/.")


class Manifest(BaseModel):
    """The pinned sources of every registered benchmark."""

    model_config = ConfigDict(frozen=True)

    format: int
    """Manifest format version."""
    description: str
    """What the manifest is."""
    sources: dict[str, SourceManifest]
    """Source name (``ultratool``, ``appbench``, ``sgd``) -> its pinned files."""


class ManifestError(ToolevalError):
    """A benchmark declares data sources that are not a valid, safe manifest."""


def _checked_source(benchmark: str, name: str, entry: object) -> SourceManifest:
    """One declared source, validated, its name one folder of the data directory and every
    file path inside it: refused here, before anything is downloaded or read."""
    where = f"data source {name!r} of benchmark {benchmark!r}"
    rule = ("every path of a benchmark's manifest (its sources.json) must be relative and stay "
            "inside the source's folder; the manifest is refused (report it to the benchmark's "
            "authors)")
    try:
        source = SourceManifest.model_validate(entry)
        check_relative(name, what=f"{where}: its name", root="<data_dir>")
        if len(PurePosixPath(name.replace("\\", "/")).parts) != 1:
            raise PathEscapeError(f"{where}: its name must be one folder name, not a path")
        for f in source.files:
            check_relative(f.path, what=f"{where}: file path", root=f"<data_dir>/{name}")
    except ValidationError as exc:
        field, msg = first_error(exc)
        raise ManifestError(f"{where}: {field}: {msg}") from exc
    except PathEscapeError as exc:
        raise ManifestError(f"{exc}: {rule}") from exc
    return source


@cache
def load_manifest() -> Manifest:
    """Every registered benchmark's pinned sources
    (:meth:`~tooleval_agents.registry.Benchmark.data_sources`), as one manifest.

    Raises:
        ManifestError: a source is malformed, or its name or a file path would leave its
            folder of the data directory (absolute, ``..``, NUL), naming the source and path.
    """
    sources = {name: _checked_source(bench.name, name, entry)
               for bench in benchmarks().values()
               for name, entry in bench.data_sources().items()}
    return Manifest(format=1, description=MANIFEST_DESCRIPTION, sources=sources)


def source_manifest(source: str) -> SourceManifest:
    """The manifest entry of ``source``; a clear error for an unknown name."""
    sources = load_manifest().sources
    if source not in sources:
        raise ToolevalError(f"unknown data source {source!r}; choose one of {', '.join(sources)}")
    return sources[source]


def select_files(source: str, *, groups: Iterable[str] | None = None,
                 include: Iterable[str] | None = None) -> list[ManifestFile]:
    """The pinned files of ``source`` in ``groups`` whose path matches any ``include`` glob.

    ``groups=None`` means the source's default groups, or every group when ``include`` is
    given (so ``include=["predictions/*"]`` alone selects predictions). Globs match the whole
    upstream path with :func:`fnmatch.fnmatchcase` (``*`` also crosses ``/``).
    """
    entry = source_manifest(source)
    patterns = list(include) if include is not None else None
    if groups is None:
        chosen = set(entry.groups) if patterns else set(entry.default_groups)
    else:
        chosen = set(groups)
        unknown = chosen - set(entry.groups)
        if unknown:
            raise ToolevalError(f"{source} has no file group {', '.join(sorted(unknown))}; "
                                f"groups: {', '.join(entry.groups)}")
    selected = [f for f in entry.files if f.group in chosen
                and (patterns is None or any(fnmatchcase(f.path, p) for p in patterns))]
    if not selected:
        wanted = f" matching {', '.join(patterns)}" if patterns else ""
        raise ToolevalError(f"no pinned {source} file{wanted} in groups "
                            f"{', '.join(sorted(chosen))}")
    return selected


# ---------------------------------------------------------------------------------------------
# URLs


class FetchError(ToolevalError):
    """A file could not be downloaded (missing at the URL, or still failing after retries)."""

    def __init__(self, url: str, message: str, *, status: int | None = None) -> None:
        self.url = url
        self.status = status
        super().__init__(message)


def _without_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without ``user:password@``, and the (unquoted) credentials it held. The password
    is registered with :func:`~tooleval_agents.redaction.register_secret`."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ToolevalError(f"bad base URL: {exc}") from exc
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not at:
        return url, None
    user, _, password = userinfo.partition(":")
    for secret in (password, unquote(password)):
        register_secret(secret)
    clean = urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment))
    return clean, (unquote(user), unquote(password))


def template_and_auth(base_url: str | None) -> tuple[str, tuple[str, str] | None]:
    """The URL template to use (``base_url``, else $TOOLEVAL_FETCH_BASE_URL, else GitHub's
    raw content) without its credentials, and those credentials (basic auth)."""
    base, auth = _without_userinfo(base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL)
    parts = urlsplit(base)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ToolevalError(f"bad base URL {base!r}: it must start with http:// or https:// "
                            f"and name a host (e.g. http://127.0.0.1:8000/)")
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(base) if name is not None}
    except ValueError as exc:
        raise ToolevalError(f"bad base URL template {base!r}: {exc}") from exc
    if not fields:
        return base.rstrip("/") + "/{source}/{path}", auth
    unknown = fields - PLACEHOLDERS
    if unknown or "path" not in fields:
        raise ToolevalError(
            f"bad base URL template {base!r}: it must contain {{path}} and may use only "
            f"{', '.join('{' + p + '}' for p in sorted(PLACEHOLDERS))}")
    return base, auth


def url_template(base_url: str | None = None) -> str:
    """The URL template in force: ``base_url``, else ``$TOOLEVAL_FETCH_BASE_URL``, else GitHub.

    A value without placeholders is a mirror root and becomes ``<root>/{source}/{path}``. The
    scheme must be ``http`` or ``https``; credentials (``user:pass@``) are left out of the
    result (:func:`fetch` sends them as basic auth).
    """
    return template_and_auth(base_url)[0]


def file_url(template: str, source: str, file: ManifestFile) -> str:
    """The URL of one pinned file under ``template``."""
    entry = source_manifest(source)
    return template.format(repo=entry.repo, commit=entry.commit, source=source,
                           path=quote(file.path, safe="/"))


# ---------------------------------------------------------------------------------------------
# Checking files


def matches_pin(path: Path, file: ManifestFile) -> bool:
    """``path`` is a copy of the pinned file (same size and sha256)."""
    return path.is_file() and path.stat().st_size == file.size and sha256_file(path) == file.sha256


CheckStatus = Literal["ok", "missing", "wrong_size", "wrong_sha256"]


class FileCheck(BaseModel):
    """How one local file compares with the manifest."""

    path: str
    """Upstream path (relative to ``<data_dir>/<source>``)."""
    group: str
    """Manifest group."""
    required: bool
    """Whether a missing file makes the check fail (it is in a requested group)."""
    status: CheckStatus
    """``ok``, ``missing``, ``wrong_size`` or ``wrong_sha256``."""
    expected_sha256: str
    """Pinned sha256."""
    actual_sha256: str | None = None
    """Sha256 found (only for ``wrong_sha256``)."""
    expected_size: int
    """Pinned size in bytes."""
    actual_size: int | None = None
    """Size found, ``None`` when missing."""


class VerifyReport(BaseModel):
    """Result of :func:`verify`."""

    source: str
    """Source checked."""
    root: Path
    """``<data_dir>/<source>``."""
    files: list[FileCheck]
    """One entry per pinned file of the source."""

    @property
    def problems(self) -> list[FileCheck]:
        """Corrupt files, and missing files of the requested groups."""
        return [f for f in self.files
                if f.status in ("wrong_size", "wrong_sha256")
                or (f.status == "missing" and f.required)]

    @property
    def ok(self) -> bool:
        """No problems."""
        return not self.problems


def verify(source: str, data_dir: Path | str | None = None, *,
           groups: Iterable[str] | None = None) -> VerifyReport:
    """Compare every pinned file of ``source`` present under ``data_dir`` with the manifest.

    Files of every group are checked when present; a missing file only counts as a problem
    when it is in ``groups`` (default: the source's default groups).
    """
    entry = source_manifest(source)
    required = set(entry.default_groups if groups is None else groups)
    root = resolve_data_dir(data_dir) / source
    checks: list[FileCheck] = []
    for f in entry.files:
        path = root / f.path
        check = FileCheck(path=f.path, group=f.group, required=f.group in required,
                          status="ok", expected_sha256=f.sha256, expected_size=f.size)
        if not path.is_file():
            check.status = "missing"
        else:
            check.actual_size = path.stat().st_size
            if check.actual_size != f.size:
                check.status = "wrong_size"
            else:
                actual = sha256_file(path)
                if actual != f.sha256:
                    check.status, check.actual_sha256 = "wrong_sha256", actual
        checks.append(check)
    return VerifyReport(source=source, root=root, files=checks)
