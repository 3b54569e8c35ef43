"""``tooleval serve``: a benchmark split's tools as an MCP server, for any agent or client.

Over streamable HTTP (the default) every example of the split has its own session at
``/s/<index>/mcp`` and its own key (:mod:`~tooleval_agents.mcp.keys`: a key opens its
example's session and no other), opened at its first request and kept until the server stops
(Ctrl-C or SIGTERM: its sessions are closed and logged, exit 0); over stdio one example
(``--example``) is served on standard input and output. The served tools, request
and answers come from the split's :class:`~tooleval_agents.contracts.AgentIO` (``--strategy``:
that strategy's agent part), so a plugin benchmark is served with no code of its own. Every
call is logged in ``OUT/serve-<split>/mcp_calls.jsonl``.

``--model SPEC`` serves a model beside the sessions (the model gateway,
:mod:`tooleval_agents.gateway`), for an agent run by hand: each example has its own gateway
URL and key, printed with the sessions' (``--json``: every example's).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from tooleval_agents.cli.base import (
    FLAG,
    DataDirOption,
    app,
    err_console,
    fail,
    handle_errors,
)
from tooleval_agents.cli.options import parse_pairs
from tooleval_agents.cli.run import CategoryArg, LangArg, SubsetArg, TaskArg
from tooleval_agents.data.datadir import data_dir_or_samples
from tooleval_agents.errors import ToolevalError
from tooleval_agents.mcp import require_mcp
from tooleval_agents.registry import get_benchmark, served_agent_io
from tooleval_agents.run.grid import choose_subsets, choose_tasks
from tooleval_agents.terminal import shown
from tooleval_agents.tool_faults import FaultSession, example_key, parse_tool_faults

SecretOption = Annotated[str | None, typer.Option(
    "--secret", envvar="TOOLEVAL_MCP_SECRET", show_default=False,
    help="What each example's key is derived from (default: a random one): the same secret "
    "gives the same keys (docs/mcp.md).")]


def _split(benchmark: str, task: str | None, lang: str | None, category: str | None,
           subset: str | None) -> Any:
    """The one split the options name (``all`` is refused: a server serves one split)."""
    bench = get_benchmark(benchmark)
    tasks = choose_tasks(bench, None if task == "all" else task, None)
    chosen = choose_subsets(bench, tasks[0], lang, category, subset)
    if len(chosen) != 1:
        raise ValueError("serve one split: name one subset, not all")
    return bench, bench.split(tasks[0], chosen[0])


@app.command("serve")
def serve_command(
    benchmark: Annotated[str, typer.Argument(help="A registered benchmark.")],
    task: TaskArg = None,
    lang: LangArg = None,
    category: CategoryArg = None,
    subset: SubsetArg = None,
    strategy: Annotated[str | None, typer.Option(
        "--strategy", help="Serve this strategy's agent part (e.g. tools_hierarchical: the "
        "open_APP tools first); default: the split's own tools.")] = None,
    transport: Annotated[Literal["http", "stdio"], typer.Option(
        "--transport", help="http: streamable HTTP, a session per example at "
        "/s/INDEX/mcp; stdio: one example on stdin/stdout.")] = "http",
    host: Annotated[str, typer.Option(
        "--host", help="Address to listen on (another than 127.0.0.1 opens the tools to "
        "that network: only Host and Origin naming it are served).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535,
                                      help="Port (0: a free one).")] = 0,
    secret: SecretOption = None,
    idle_timeout: Annotated[float, typer.Option(
        "--idle-timeout", min=0.001, metavar="SECONDS",
        help="An MCP session with no request for this long ends (its client initializes "
        "again).")] = 1800.0,
    example: Annotated[int, typer.Option(
        "--example", min=0, help="The example served over stdio (its index in the split).")
    ] = 0,
    tool_faults: Annotated[str | None, typer.Option(
        "--tool-faults", help="Seeded tool faults rate=R,kinds=K1+K2,seed=S, drawn as in a "
        "run of the same example.")] = None,
    out: Annotated[Path, typer.Option("--out", help="Results root: the call log goes to "
                                      "OUT/serve-SPLIT/mcp_calls.jsonl.")] = Path("runs"),
    data_dir: DataDirOption = None,
    json_out: Annotated[bool, typer.Option(
        "--json", metavar=FLAG, help="Print the server's URL template, each example's URL and "
        "key, and the log as one JSON line on stdout once it listens (http).")] = False,
    model: Annotated[str | None, typer.Option(
        "--model", metavar="SPEC", help="Serve this model to the agent too (the model "
        "gateway: OpenAI Chat Completions and Responses, Anthropic Messages), each example "
        "under its own URL and key; reference plays the example's gold calls.")] = None,
    model_arg: Annotated[list[str] | None, typer.Option(
        "--model-arg", metavar="KEY=VALUE", help="init_chat_model argument of --model "
        "(repeatable), e.g. base_url=URL.")] = None,
) -> None:
    """Serve a split's tools over MCP: one session per example (its tools and state, its
    request as the prompt `task` and the resource tooleval://example/request), every call
    logged. HTTP listens on 127.0.0.1 and needs each example's own key as `Authorization:
    Bearer <key>`; Ctrl-C or SIGTERM stops it (exit 0). See docs/mcp.md."""
    from tooleval_agents.data.langsmith_datasets import to_examples

    try:
        require_mcp()
        bench, split = _split(benchmark, task, lang, category, subset)
        faults = parse_tool_faults(tool_faults)
        name, io_for = served_agent_io(bench, split, strategy)
        data, note = data_dir_or_samples(bench, [split], data_dir)
        examples = to_examples(split, data)
        io = io_for(data)
    except (ToolevalError, KeyError, ValueError, OSError) as exc:
        raise handle_errors(exc) from None
    if note:
        err_console.print(f"[yellow]note:[/] {shown(note)}", highlight=False)
    log = Path(out) / f"serve-{split.name}" / "mcp_calls.jsonl"
    active = faults if faults is not None and faults.active else None

    def faults_of(inputs: dict[str, Any]) -> FaultSession | None:
        return FaultSession(active, example_key(inputs, None)) if active else None

    if transport == "stdio":
        if model is not None:
            raise fail("--model: the model gateway is served over HTTP (--transport http)", 2)
        _serve_stdio(io, examples, example, log, faults_of)
        return
    try:
        gateway = None if model is None else served_model_gateway(
            bench, split, name, data, model, parse_pairs(model_arg, "--model-arg"))
    except (ToolevalError, KeyError, ValueError) as exc:
        raise handle_errors(exc) from None
    _serve_http(io, examples, split, name, log, faults_of, host=host, port=port,
                secret=secret, idle_timeout=idle_timeout, json_out=json_out, gateway=gateway)


def _serve_stdio(io: Any, examples: Any, index: int, log: Path, faults_of: Any) -> None:
    from tooleval_agents.mcp.log import CallLog
    from tooleval_agents.mcp.server import serve_stdio
    from tooleval_agents.mcp.sessions import ExampleSession

    if index >= len(examples):
        raise fail(f"--example {index}: the split has {len(examples)} examples", 2)
    inputs = dict(examples[index].inputs or {})
    calls = CallLog(log)
    session = ExampleSession(id=str(index), label=str(index), tools=io.open(inputs),
                             messages=io.messages(inputs), log=calls, faults=faults_of(inputs))
    try:
        asyncio.run(serve_stdio(session))
    finally:
        calls.close()


def served_model_gateway(bench: Any, split: Any, strategy: str, data: Path, spec: str,
                         kwargs: dict[str, Any]) -> Any:
    """The model gateway of ``tooleval serve --model``: the model wrapped as a run wraps it
    (its retry policy; no response cache: an agent tried by hand asks afresh), ``reference``
    and ``noisy-reference`` playing the gold of the strategy whose agent part is served."""
    from tooleval_agents.gateway import require_gateway
    from tooleval_agents.gateway.server import ModelGateway
    from tooleval_agents.models.offline import reference_model
    from tooleval_agents.models.retry import RetryingChatModel
    from tooleval_agents.models.specs import check_model_spec, is_offline, provider_model

    require_gateway()
    check_model_spec(spec)
    if is_offline(spec) and kwargs:
        raise ValueError(f"--model-arg: the offline model {spec} takes no arguments")
    inner = (reference_model(bench, task=split.task, subset=split.subset, model=spec,
                             strategy=strategy, data_dir=data) if is_offline(spec)
             else provider_model(spec, kwargs))
    return ModelGateway(RetryingChatModel(inner=inner), name=spec)


def _gateway_grants(gateway: Any, count: int) -> list[dict[str, Any]]:
    """Every example's gateway URLs and key (its grant minted now, kept until the end)."""
    from tooleval_agents.models.accounting import CallStats

    out = []
    for index in range(count):
        grant = gateway.grant(str(index), CallStats())
        out.append({"index": index, "openai_base_url": gateway.openai_url(grant),
                    "anthropic_base_url": gateway.url(grant), "api_key": grant.key,
                    "stats": grant.stats})
    return out


SHOWN_KEYS = 5
"""Examples whose gateway URL and key the human-readable line lists (``--json``: all)."""


def _say_gateway(gateway: Any, grants: list[dict[str, Any]]) -> None:
    shown_ = "; ".join(f"#{g['index']}: {g['anthropic_base_url']} key {g['api_key']}"
                       for g in grants[:SHOWN_KEYS])
    more = f" (and {len(grants) - SHOWN_KEYS} more: --json lists them)" \
        if len(grants) > SHOWN_KEYS else ""
    err_console.print(shown(
        f"model gateway: {gateway.served.name} for each example at its own URL (the Anthropic "
        f"base; OpenAI's adds /v1) with its own key -- {shown_}{more}. Send the model name "
        f"{gateway.served.name!r}."), highlight=False)


def _gateway_spent(grants: list[dict[str, Any]]) -> str:
    stats = [g["stats"] for g in grants]
    calls = sum(s.calls + s.cache_hits for s in stats)
    return (f"model gateway: {calls} model call(s) answered, tokens "
            f"{sum(s.input_tokens for s in stats)} in / {sum(s.output_tokens for s in stats)} "
            "out.")


def _serve_http(io: Any, examples: Any, split: Any, name: str, log: Path, faults_of: Any, *,
                host: str, port: int, secret: str | None, idle_timeout: float,
                json_out: bool, gateway: Any = None) -> None:
    from tooleval_agents.mcp.server import ToolServer

    count = len(examples)

    async def on_demand(sid: str) -> Any:
        if not sid.isdigit() or str(int(sid)) != sid or int(sid) >= count:
            return None  # an index as printed only: /s/00 is not a second /s/0
        inputs = dict(examples[int(sid)].inputs or {})
        return server.session(io.open(inputs), io.messages(inputs), label=sid,
                              faults=faults_of(inputs), session_id=sid)

    server = ToolServer(log=log, host=host, port=port, secret=secret, on_demand=on_demand,
                        idle_timeout=idle_timeout)
    try:
        server.start()
        grants = _gateway_grants(gateway, count) if gateway is not None else []
    except ToolevalError as exc:
        server.stop()
        raise handle_errors(exc) from None
    # SIGTERM stops it cleanly from before the URL is out: a client that starts on that line
    # and stops it at once gets "stopped.", not the 143 of a command cut short.
    with _stop_signal() as stop:
        _say_serving(server, split.name, name, count, log, json_out, gateway, grants)
        _wait(stop)
    server.stop()  # every session closed and logged
    if gateway is not None:
        gateway.stop()
        err_console.print(shown(_gateway_spent(grants)), highlight=False)
    err_console.print("stopped.", highlight=False)


def _say_serving(server: Any, split: str, name: str, count: int, log: Path, json_out: bool,
                 gateway: Any, grants: list[dict[str, Any]]) -> None:
    """Where each example is served (and its gateway), on stdout with ``--json``."""
    template = server.url("<index>")
    if json_out:
        listed = {"gateway": {"model": gateway.served.name, "examples": [
            {k: v for k, v in g.items() if k != "stats"} for g in grants]}} if grants else {}
        print(json.dumps({"url": template, "examples": count, "sessions": [
            {"index": i, "url": server.url(str(i)), "key": server.key(str(i))}
            for i in range(count)], "log": str(log), "strategy": name, **listed}), flush=True)
    first = f" (example 0's: {server.key('0')})" if count else ""
    err_console.print(shown(
        f"serving {split} ({name}): {count} examples, each at {template} (index "
        f"0-{count - 1}) with its own key, sent as 'Authorization: Bearer <key>'{first}; "
        f"--json lists every example's URL and key; calls logged in {log}. Ctrl-C stops."),
        highlight=False)
    if gateway is not None:
        _say_gateway(gateway, grants)


@contextlib.contextmanager
def _stop_signal() -> Iterator[threading.Event]:
    """An event SIGTERM sets while the block runs (the signal's own handling put back after)."""
    stop = threading.Event()
    before = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        yield stop
    finally:
        signal.signal(signal.SIGTERM, before)


def _wait(stop: threading.Event) -> None:
    """Block until Ctrl-C or ``stop`` is set."""
    try:
        while not stop.wait(3600):
            pass
    except KeyboardInterrupt:
        pass
