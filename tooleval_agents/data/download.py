"""Downloading the pinned upstream files (:func:`fetch`): apart from
:mod:`tooleval_agents.data.fetch`
(the manifest, URLs and verification) so that commands that only read the manifest do not
import the HTTP client."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import BaseModel
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from tooleval_agents.data.datadir import resolve_data_dir
from tooleval_agents.data.fetch import (
    BACKOFF,
    BASE_URL_ENV,
    RETRIES,
    FetchError,
    ManifestFile,
    file_url,
    matches_pin,
    select_files,
    source_manifest,
    template_and_auth,
)
from tooleval_agents.data.paths import inside
from tooleval_agents.errors import ChecksumError
from tooleval_agents.terminal import shown

TIMEOUT = httpx.Timeout(60.0, connect=15.0)
_CHUNK = 1 << 16
_RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
# NetworkError covers connect/read/write errors (e.g. connection reset); RemoteProtocolError
# covers a server closing mid-response (a truncated body).
_TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


class _RetryableStatus(Exception):
    def __init__(self, status: int) -> None:
        self.status = status
        super().__init__(f"HTTP {status}")


# ---------------------------------------------------------------------------------------------
# Fetching

FetchStatus = Literal["downloaded", "present", "replaced"]


class FetchedFile(BaseModel):
    """What :func:`fetch` did with one file."""

    path: str
    """Upstream path (relative to ``<data_dir>/<source>``)."""
    status: FetchStatus
    """``downloaded`` (was absent), ``replaced`` (a local copy had the wrong sum) or
    ``present`` (already correct, not downloaded)."""
    size: int
    """Size in bytes."""
    url: str
    """Where it was (or would have been) downloaded from."""
    attempts: int = 0
    """HTTP requests made for it (0 when present)."""


class FetchReport(BaseModel):
    """Result of :func:`fetch`."""

    source: str
    """Source fetched."""
    repo: str
    """Upstream ``owner/name``."""
    commit: str
    """Pinned commit."""
    root: Path
    """``<data_dir>/<source>``."""
    url_template: str
    """URL template used."""
    files: list[FetchedFile]
    """One entry per selected file, in manifest order."""

    @property
    def transferred(self) -> list[FetchedFile]:
        """Files downloaded in this run."""
        return [f for f in self.files if f.status != "present"]

    @property
    def bytes_downloaded(self) -> int:
        """Bytes written in this run."""
        return sum(f.size for f in self.transferred)


def _check_status(response: httpx.Response, url: str, source: str, file: ManifestFile) -> None:
    status = response.status_code
    if status in _RETRY_STATUS:
        raise _RetryableStatus(status)
    if status == 404:
        raise FetchError(
            url, f"{url}: HTTP 404 Not Found. The pinned file {source}/{file.path} is not at "
            f"this address; check --base-url / ${BASE_URL_ENV} (a template with {{path}}, or a "
            f"mirror root laid out as <root>/<source>/<path>).", status=404)
    if status >= 400:
        raise FetchError(url, f"{url}: HTTP {status} {response.reason_phrase}", status=status)


def _download_once(client: httpx.Client, url: str, target: Path, source: str,
                   file: ManifestFile, advance: Callable[[int], None]) -> None:
    """One GET into a temporary file beside ``target``, checked, then renamed over it; a
    failed try leaves no folder it created behind."""
    created = [d for d in (target.parent, *target.parent.parents) if not d.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    # Opened with open() (not mkstemp) so the file gets the usual umask-based mode.
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.part")
    ok = False
    try:
        digest = hashlib.sha256()
        with tmp.open("xb") as out, client.stream("GET", url) as response:
            _check_status(response, url, source, file)
            for chunk in response.iter_bytes(_CHUNK):
                out.write(chunk)
                digest.update(chunk)
                advance(len(chunk))
        actual = digest.hexdigest()
        if actual != file.sha256:
            raise ChecksumError(
                f"{source}/{file.path}: sha256 mismatch: expected {file.sha256}, got {actual} "
                f"({tmp.stat().st_size} of {file.size} bytes from {url}); the download was "
                f"discarded")
        os.replace(tmp, target)
        ok = True
    finally:
        tmp.unlink(missing_ok=True)
        if not ok:
            for folder in created:  # innermost first; a folder now holding files stays
                with contextlib.suppress(OSError):
                    folder.rmdir()


def _download(client: httpx.Client, outcome: FetchedFile, f: ManifestFile, target: Path,
              source: str, *, retries: int, backoff: float, advance: Callable[[int], Any],
              restart: Callable[[], Any]) -> None:
    """One file, retried on a transient failure (``restart`` rewinds the progress bar: the
    retry starts the file again)."""
    for attempt in range(1, retries + 2):
        outcome.attempts = attempt
        try:
            _download_once(client, outcome.url, target, source, f, advance)
            return
        except (*_TRANSIENT, _RetryableStatus) as exc:
            restart()
            if attempt > retries:
                offline = (f" -- no network here? Fetch from a mirror with --base-url "
                           f"(or ${BASE_URL_ENV}): a URL template with {{path}}, or a "
                           "folder laid out as <root>/<source>/<path>, e.g. served by "
                           "`python -m http.server -d DATA_DIR` where the data is"
                           if isinstance(exc, httpx.ConnectError) else "")
                raise FetchError(
                    outcome.url, f"{outcome.url}: still failing after {attempt} "
                    f"attempts ({type(exc).__name__}: {exc}){offline}",
                    status=getattr(exc, "status", None)) from exc
            time.sleep(backoff * 2 ** (attempt - 1))
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # not worth retrying
            raise FetchError(outcome.url, f"{outcome.url}: {type(exc).__name__}: "
                             f"{exc}") from exc


def fetch(source: str, data_dir: Path | str | None = None, *,
          base_url: str | None = None,
          groups: Iterable[str] | None = None,
          include: Iterable[str] | None = None,
          progress: bool = True,
          retries: int = RETRIES,
          backoff: float = BACKOFF,
          console: Console | None = None) -> FetchReport:
    """Download the pinned files of ``source`` into ``<data_dir>/<source>/`` and verify them.

    Files already present with the pinned sha256 are skipped, so an interrupted fetch resumes.
    Each download goes to a temporary file that is renamed into place only after its sha256
    matched; timeouts, connection errors and HTTP 5xx/429 are retried ``retries`` times with
    exponential ``backoff``.

    Args:
        source: ``ultratool``, ``appbench`` or ``sgd``.
        data_dir: Data directory (``None``: :func:`~tooleval_agents.data.datadir.resolve_data_dir`).
        base_url: URL template or mirror root (see :func:`url_template`).
        groups: Manifest groups, e.g. ``["data", "predictions"]`` (see :func:`select_files`).
        include: Globs on the upstream path restricting the selection.
        progress: Show a rich progress bar (on stderr unless ``console`` is given).

    Raises:
        ChecksumError: a downloaded file differs from the manifest (it is not kept).
        FetchError: HTTP 404 or another client error, an unusable URL, or still failing
            after the retries.
        ValueError: ``retries`` is negative.
    """
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    entry = source_manifest(source)
    selected = select_files(source, groups=groups, include=include)
    template, auth = template_and_auth(base_url)
    root = resolve_data_dir(data_dir) / source
    outcomes: list[FetchedFile] = []
    pending: list[tuple[FetchedFile, ManifestFile, Path]] = []
    for f in selected:
        # The manifest's paths were checked when it loaded; links under the source's folder
        # are followed here (the folder itself may be a link to another disk).
        target = inside(root, f.path, what=f"{source} file path")
        outcome = FetchedFile(path=f.path, size=f.size, url=file_url(template, source, f),
                              status="present")
        if not matches_pin(target, f):
            outcome.status = "replaced" if target.exists() else "downloaded"
            pending.append((outcome, f, target))
        outcomes.append(outcome)

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
               TransferSpeedColumn(), TimeRemainingColumn())
    bar = Progress(*columns, console=console or Console(stderr=True),
                   disable=not (progress and pending))
    with bar, httpx.Client(timeout=TIMEOUT, follow_redirects=True, auth=auth,
                           headers={"User-Agent": "tooleval-agents"}) as client:
        task = bar.add_task(shown(source), total=sum(f.size for _, f, _ in pending))
        done = 0
        for outcome, f, target in pending:
            bar.update(task, description=shown(f"{source}/{f.path}"))
            _download(client, outcome, f, target, source, retries=retries, backoff=backoff,
                      advance=lambda n: bar.advance(task, n),
                      restart=functools.partial(bar.update, task, completed=done))
            done += f.size
        bar.update(task, description=shown(f"{source}: done"))
    return FetchReport(source=source, repo=entry.repo, commit=entry.commit, root=root,
                       url_template=template, files=outcomes)
