"""An agent command as the system under test: ``tooleval run ... --agent-cmd 'CMD'``.

Per example the harness opens the example's session on the run's MCP server
(:class:`~tooleval_agents.mcp.server.ToolServer`, with the example's tool faults), runs CMD in
a shell of its own (a new process group), waits for it, and closes the session. The calls the
session answered are the trajectory; what CMD printed on standard output is its final answer;
both are read by the split's :class:`~tooleval_agents.contracts.AgentIO`, as an agent of the
run is read, so every metric of an ``--agent`` run applies.

What CMD gets (each placeholder is replaced, shell-quoted; each variable is set):

==================  ===========================  =============================================
placeholder         environment variable         value
==================  ===========================  =============================================
``{url}``           ``TOOLEVAL_MCP_URL``         the session's streamable-HTTP URL
``{token}``         ``TOOLEVAL_MCP_TOKEN``       the session's own key (its bearer token)
``{instruction}``   ``TOOLEVAL_INSTRUCTION``     the request (also on standard input)
``{instruction_file}`` ``TOOLEVAL_INSTRUCTION_FILE`` a file holding the request
``{usage_file}``    ``TOOLEVAL_USAGE_FILE``      where the agent may write its token usage
``{model}``         ``TOOLEVAL_MODEL``           ``--model`` when given (the model name to
                                                 send the gateway), else empty
``{example}``       ``TOOLEVAL_EXAMPLE``         the example's key (its inputs' digest, epoch)
==================  ===========================  =============================================

With ``--model`` the run's model is served to the agent by the model gateway
(:mod:`tooleval_agents.gateway`), under the example's own URL and key (:func:`served_model`,
:func:`model_env`): ``{openai_base_url}`` (``OPENAI_BASE_URL``), ``{anthropic_base_url}``
(``ANTHROPIC_BASE_URL``) and ``{api_key}`` (``OPENAI_API_KEY`` and ``ANTHROPIC_API_KEY``), so
an unchanged SDK finds it. Its calls are the example's: in its transcript, tokens and cost.

With ``--agent-sandbox`` (:attr:`AgentCommand.sandbox`) CMD runs sealed, in a ``bwrap`` view
of the machine made for its example (:mod:`tooleval_agents.mcp.sandbox`); without it, as the
user (the run is marked unsealed).

An agent that exits non-zero (``agent_exit``), does not finish within ``--agent-timeout``
(``agent_timeout``: it and everything it started are ended) or prints what cannot be read
(``agent_output``: not UTF-8, or more than :data:`MAX_OUTPUT` bytes) fails its example: the
failure is recorded with its kind and the example scored as an empty answer, never dropped.
Every process it started, one that left its process group included, is ended once it exits
(:mod:`tooleval_agents.mcp.agent_process`), and with the harness; a call that still reaches
its session after it ended is answered 404 and logged as a late call. An agent that never
reached its tools -- it exited 0 but its session saw no ``tools/list`` and no call, or a
preset's agent reports its MCP server failed -- is ``agent_no_tools``: a wiring failure (a
wrong URL or token), not a weak answer.

A preset (``--agent-preset``, :mod:`tooleval_agents.mcp.presets`) is started by the harness
instead of a command: its configuration written for the example, its structured output read
for its final answer, turns and own usage (recorded beside the gateway's count).

Token usage, when the agent brings its own model, is the agent's to report: a JSON object
``{"input_tokens": N, "output_tokens": N, "model_calls": N}`` (``cached_input_tokens``
optional), or one such object per line (summed), written to ``TOOLEVAL_USAGE_FILE``. Without it
the run's tokens and cost are not reported. With the gateway, its calls are counted as they
are answered (a usage file is kept in the trace, as the agent's own figure).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import signal
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable, RunnableLambda

from tooleval_agents.contracts import (
    AgentIO,
    ServedSession,
    SessionHost,
    Strategy,
    StrategyContext,
)
from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.errors import ToolevalError
from tooleval_agents.gateway.grants import Grant
from tooleval_agents.gateway.server import ModelGateway
from tooleval_agents.mcp.agent_process import HARNESS_ENV, unsealed_argv
from tooleval_agents.mcp.presets.base import Report, Resolved, Served
from tooleval_agents.mcp.sandbox import AgentSandbox, Seal, check_sandbox, hidden_paths
from tooleval_agents.mcp.sessions import request_text
from tooleval_agents.models.accounting import current_stats
from tooleval_agents.models.failures import classify
from tooleval_agents.models.tool_calls.counts import AGENT_RECORD
from tooleval_agents.redaction import redact_text
from tooleval_agents.results.summary import NO_TOOLS
from tooleval_agents.tool_faults import current_faults, example_key

MAX_OUTPUT = 1 << 20
"""Bytes of standard output an agent may print (its final answer); more is ``agent_output``."""
MAX_EVENTS = 16 << 20
"""Bytes of structured output a preset's agent may print (its events: messages, tool results)."""
STDERR_TAIL = 2000
"""Characters of the end of its standard error kept for an error message."""
MAX_USAGE_FILE = 1 << 20
MAX_ENV = 100_000
"""Characters of the request put in ``TOOLEVAL_INSTRUCTION`` at most (the file has it all)."""
KILL_GRACE_S = 2.0
"""Seconds between SIGTERM and SIGKILL of a process group that timed out."""
EXIT_POLL_S = 0.01
PIPE_GRACE_S = 1.0
"""Seconds the agent's output is still read once its process group is gone."""
REAP_S = 2.0
"""Seconds the reaper (or the sandbox) has, beyond a timeout's grace, to end what the agent
started before its process group is killed."""
_PLACEHOLDER = re.compile(r"\{(url|token|instruction|instruction_file|usage_file|model|"
                          r"example|openai_base_url|anthropic_base_url|api_key)\}")
USAGE_KEYS = ("input_tokens", "output_tokens", "cached_input_tokens", "model_calls")
MAX_COUNT = 2**53
"""The largest count a usage file may give (or sum to): JSON numbers are exact up to it in every
reader; a file with more is unreadable (its usage is not reported)."""


class AgentCommandError(ToolevalError):
    """The agent command failed its example: ``error_kind`` is ``agent_exit``,
    ``agent_timeout``, ``agent_output`` or ``agent_no_tools`` (the runner records it as the
    example's error)."""

    def __init__(self, error_kind: str, message: str) -> None:
        super().__init__(message)
        self.error_kind = error_kind


@dataclass(frozen=True)
class AgentCommand:
    """What ``--agent-cmd``, ``--agent-name`` and ``--agent-timeout`` asked for."""

    command: str
    name: str = "agent"
    timeout: float = 300.0
    model: str | None = None
    """The ``--model`` spec handed to the agent (``{model}``), if any."""
    sandbox: AgentSandbox | None = None
    """How it is sealed (``--agent-sandbox``; :mod:`tooleval_agents.mcp.sandbox`); ``None``:
    it runs unsealed, as the user."""
    preset: Resolved | None = None
    """The agent people use that plays the run (``--agent-preset``, :mod:`tooleval_agents.
    mcp.presets`): started and read by the harness, ``command`` only names it."""


@dataclass
class Finished:
    """How an agent process ended."""

    returncode: int | None
    stdout: bytes
    stdout_bytes: int
    stderr: str
    """What it printed on standard error (its first MiB)."""
    timed_out: bool
    seconds: float


def render(template: str, values: dict[str, str]) -> str:
    """``template`` with each known ``{placeholder}`` replaced by its shell-quoted value (any
    other brace is left alone).

    >>> render("agent --url {url} --say {x}", {"url": "http://h/s/1/mcp"})
    'agent --url http://h/s/1/mcp --say {x}'
    """
    return _PLACEHOLDER.sub(lambda m: shlex.quote(values.get(m.group(1), "")), template)


@dataclass
class _Sink:
    """What a process printed on one stream: the first ``keep`` bytes, and how many."""

    keep: int
    kept: bytearray = field(default_factory=bytearray)
    total: int = 0

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        while stream is not None and (chunk := await stream.read(1 << 16)):
            self.total += len(chunk)
            if len(self.kept) < self.keep:
                self.kept += chunk[:self.keep - len(self.kept)]


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Wait for the process itself to end (``Process.wait`` also waits for its pipes, which
    a child that left the group may hold open)."""
    while proc.returncode is None:
        await asyncio.sleep(EXIT_POLL_S)


async def _feed(stream: asyncio.StreamWriter | None, text: str) -> None:
    if stream is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.write(text.encode("utf-8"))
        await stream.drain()
        stream.close()


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def run_process(command: str, *, env: dict[str, str], stdin: str, timeout: float,
                      seal: Seal | None = None, cwd: Path | None = None,
                      keep: int = MAX_OUTPUT) -> Finished:
    """Run ``command`` in a shell of its own process group (in ``cwd``, else here), sealed in
    the agent sandbox when ``seal`` is given, else under the per-agent reaper
    (:mod:`tooleval_agents.mcp.agent_process`); end everything it started once it exits or
    times out (``SIGTERM``, then ``SIGKILL``), or at once when the run stops (the task is
    cancelled). Of its output the first ``keep`` bytes are kept (one more tells it printed
    more)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    env = {**env, HARNESS_ENV: str(os.getpid())}
    async with contextlib.AsyncExitStack() as stack:
        if seal is not None:
            argv, env = await stack.enter_async_context(seal.opened(command, env))
        else:
            argv = unsealed_argv(command, KILL_GRACE_S)
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, start_new_session=True, cwd=cwd)
        out, err = _Sink(keep + 1), _Sink(1 << 20)
        readers = {asyncio.ensure_future(out.drain(proc.stdout)),
                   asyncio.ensure_future(err.drain(proc.stderr))}
        feed = asyncio.ensure_future(_feed(proc.stdin, stdin))  # an agent may never read it
        timed_out = False
        try:
            await asyncio.wait_for(_exited(proc), timeout)
        except TimeoutError:
            timed_out = True
            _kill_group(proc.pid, signal.SIGTERM)  # the reaper passes it on, beyond the group
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_exited(proc), KILL_GRACE_S + REAP_S)
        except asyncio.CancelledError:  # the run stops: every process of the agent, now
            _kill_group(proc.pid, signal.SIGUSR1)  # the reaper's (and bwrap's) "end now"
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_exited(proc), REAP_S)
            raise
        finally:  # whatever the agent left in its group, and the agent itself if it timed out
            _kill_group(proc.pid, signal.SIGKILL)
            await _exited(proc)
            feed.cancel()
            # A child that left the group (where no reaper runs) may hold the pipes open:
            # what came after the agent ended is not its answer.
            _, pending = await asyncio.wait(readers, timeout=PIPE_GRACE_S)
            for reader in pending:
                reader.cancel()
    return Finished(proc.returncode, bytes(out.kept), out.total,
                    bytes(err.kept).decode("utf-8", "replace"), timed_out,
                    loop.time() - started)


def failure(done: Finished, timeout: float,
            limit: int = MAX_OUTPUT) -> AgentCommandError | None:
    """Why an agent's run failed its example (``None``: it did not); ``limit``: the bytes
    its output may have."""
    tail = redact_text(done.stderr[-STDERR_TAIL:].strip()[-500:])
    said = f"; its stderr ends: {tail}" if tail else ""
    if done.timed_out:
        return AgentCommandError("agent_timeout", f"the agent did not finish within "
                                 f"{timeout:g} s: its process group was killed{said}")
    if done.returncode != 0:
        how = (f"was killed by signal {-done.returncode}" if done.returncode is not None
               and done.returncode < 0 else f"exited with status {done.returncode}")
        return AgentCommandError("agent_exit", f"the agent {how}{said}")
    if done.stdout_bytes > limit:
        return AgentCommandError("agent_output", f"the agent printed {done.stdout_bytes} bytes, "
                                 f"more than the {limit} its output may have")
    try:
        done.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        return AgentCommandError("agent_output", "the agent's output is not UTF-8 text "
                                 f"(byte {exc.start}): it cannot be read as its answer")
    return None


def read_usage(path: Path) -> dict[str, int] | None:
    """The usage an agent wrote to its usage file: one JSON object, or one per line, summed;
    ``None`` when it wrote none or nothing readable (a count, or a sum, above
    :data:`MAX_COUNT` included)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_USAGE_FILE:
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        objects = [parse_json(text)]
    except ValueError:  # JSON Lines
        try:
            objects = [parse_json(line) for line in text.splitlines() if line.strip()]
        except ValueError:
            return None
    total = dict.fromkeys(USAGE_KEYS, 0)
    found = False
    for value in objects:
        for key in USAGE_KEYS:
            number = value.get(key) if isinstance(value, dict) else None
            if isinstance(number, int) and not isinstance(number, bool) and number >= 0:
                total[key] += number
                found = True
                if total[key] > MAX_COUNT:
                    return None
    return total if found else None


@dataclass
class Ran:
    """How one example's agent ran: its process, and what it said of itself."""

    done: Finished
    usage: dict[str, int] | None
    """The usage it reported (its usage file, or a preset's own figure)."""
    report: Report | None = None
    """A preset's structured output, read (``None``: an agent command)."""

    def answer(self) -> str:
        """Its final answer: a preset's result, else what it printed."""
        if self.report is not None:
            return (self.report.final or "").strip()
        return self.done.stdout.decode("utf-8").strip()


@dataclass
class ExternalAgent:
    """The workflow of an ``--agent-cmd`` run over one split (see the module docstring)."""

    io: AgentIO
    server: SessionHost
    command: AgentCommand
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    gateway: ModelGateway | None = None
    """The run's model, served to the agent (``None``: it brings its own)."""
    hidden: tuple[Path, ...] = ()
    """What a sealed agent never sees (:func:`~tooleval_agents.mcp.sandbox.hidden_paths`)."""

    async def __call__(self, state: dict[str, Any]) -> dict[str, Any]:
        inputs = dict(state["inputs"])
        tools, sent = self.io.open(inputs), self.io.messages(inputs)
        stats = current_stats()
        key = example_key(inputs, stats.epoch if stats is not None else None)
        session = await self.server.open(tools, sent, label=key, faults=current_faults())
        grant = None
        try:
            grant = self.gateway.grant(key, stats) if self.gateway is not None else None
            with tempfile.TemporaryDirectory(prefix="tooleval-agent-") as tmp:
                ran = await self._run(session, grant, request_text(sent), key, Path(tmp))
        finally:
            await self.server.close(session)
            if self.gateway is not None and grant is not None:
                self.gateway.end(grant)
        _account(ran.usage, grant)  # spent whether or not the agent then failed
        error = outcome(ran, session, self.command)
        # An agent without its tools asked the model what it could not answer well: the
        # wiring failed first, whatever the model then said.
        no_tools = error is not None and error.error_kind == NO_TOOLS
        model_failed = None if no_tools else model_failure(grant,
                                                            agent_failed=error is not None)
        if model_failed is not None:  # the example's failure is the model's (or its provider's)
            raise model_failed
        if error is not None:
            raise AgentCommandError(error.error_kind, f"{error} ({len(session.calls)} tool "
                                    f"call(s) in session {session.id})") from None
        outputs = dict(tools.outputs(session.conversation(ran.answer())))
        for record in outputs.get("trace") or []:
            if isinstance(record, dict) and record.get("kind") == AGENT_RECORD:
                # Its calls are what its session answered; what it printed is its answer,
                # never a call to read (JSON it prints is no unread call).
                record["unread_text_calls"] = 0
                record["foreign_calls"] = session.foreign  # refused: counted in the summary
        outputs["trace"] = [process_record(ran, session, self.command, grant),
                            *([grant.record()] if grant is not None else []),
                            *(outputs.get("trace") or [])]
        return outputs

    async def _run(self, session: ServedSession, grant: Grant | None, instruction: str,
                   key: str, tmp: Path) -> Ran:
        """Run the agent for one example (its files in ``tmp``)."""
        # The session's own key: it opens this example's session and no other.
        values = {"url": self.server.url(session), "token": self.server.key(session),
                  "instruction": instruction, "model": self.command.model or "",
                  "instruction_file": str(tmp / "instruction.txt"),
                  "usage_file": str(tmp / "usage.json"), "example": key}
        Path(values["instruction_file"]).write_text(instruction, encoding="utf-8")
        env = {**self.env, **{f"TOOLEVAL_{k.upper()}": v for k, v in values.items()
                              if k not in ("url", "token", "instruction")},
               "TOOLEVAL_MCP_URL": values["url"], "TOOLEVAL_MCP_TOKEN": values["token"],
               # One variable may hold 128 KiB: a longer request is in the file.
               "TOOLEVAL_INSTRUCTION": instruction if len(instruction) < MAX_ENV else ""}
        served = served_model(self.gateway, grant)
        values, env = {**values, **served}, model_env(env, served)
        timeout = self.command.timeout
        preset = self.command.preset
        if preset is None:
            done = await run_process(render(self.command.command, values), env=env,
                                     stdin=instruction, timeout=timeout,
                                     seal=self.seal((values["url"], *served.values()), str(tmp)))
            return Ran(done, read_usage(Path(values["usage_file"])))
        launch = preset.preset.launch(preset.program, tmp, Served(
            mcp_url=values["url"], model=self.command.model or "",
            variables=served_variables(env),
            openai_base_url=served.get("openai_base_url", ""),
            anthropic_base_url=served.get("anthropic_base_url", ""),
            api_key=served.get("api_key", "")))
        done = await run_process(shlex.join(launch.argv), env=launch.env, stdin=instruction,
                                 timeout=timeout, cwd=launch.cwd, keep=MAX_EVENTS)
        report = preset.preset.read(done.stdout.decode("utf-8", "replace"), done.stderr)
        return Ran(done, report.usage, report)

    def seal(self, reached: tuple[str, ...], folder: str) -> Seal | None:
        """What seals the agent of one example (``None``: unsealed): it reaches the URLs of
        ``reached`` (its session, and the gateway when the run's model is served) and writes
        ``folder`` (its request and usage files)."""
        sandbox = self.command.sandbox
        if sandbox is None:
            return None
        urls = tuple(u for u in reached if u.startswith("http://"))  # not the key
        return Seal(sandbox, check_sandbox(), urls=urls, shared=(Path(folder),),
                    hidden=self.hidden)


def served_variables(env: dict[str, str]) -> dict[str, str]:
    """The variables of an agent's environment that are the example's (``TOOLEVAL_*``) or
    the served model's (``OPENAI_*``, ``ANTHROPIC_*`` that :func:`model_env` set)."""
    return {k: v for k, v in env.items() if k.startswith("TOOLEVAL_") or k in MODEL_ENV}


def outcome(ran: Ran, session: ServedSession, command: AgentCommand) -> AgentCommandError | None:
    """Why the agent failed its example (``None``: it did not): it timed out, never reached
    its tools (``agent_no_tools``: a preset's MCP server failed, or a session it never
    listed nor called), exited non-zero, printed what cannot be read, or (a preset) gave no
    final answer."""
    done, report = ran.done, ran.report
    if done.timed_out:
        return failure(done, command.timeout)
    if report is not None and report.no_tools is not None:
        return AgentCommandError(NO_TOOLS, f"{report.no_tools}: it ran without its tools, so "
                                 "its answer says nothing of its use of them")
    error = failure(done, command.timeout, MAX_OUTPUT if report is None else MAX_EVENTS)
    if error is not None:
        said = f" ({report.error})" if report is not None and report.error else ""
        return AgentCommandError(error.error_kind, f"{error}{said}")
    if report is not None and report.final is None:
        return AgentCommandError("agent_output", "its output held no final answer"
                                 + (f": {report.error}" if report.error else
                                    f" ({report.unread} unreadable line(s))"))
    if not session.listed and not session.calls:
        return AgentCommandError(NO_TOOLS, "the agent never reached its tools: its MCP "
                                 "session saw no tools/list and no call (a wrong URL or token, "
                                 "or a client that did not connect?), so its answer says "
                                 "nothing of its use of them")
    return None


def process_record(ran: Ran, session: ServedSession, command: AgentCommand,
                   grant: Grant | None) -> dict[str, Any]:
    """The trace's record of the agent's process (and, for a preset, what it reported)."""
    done = ran.done
    record: dict[str, Any] = {
        "kind": "agent_process", "session": session.id, "calls": len(session.calls),
        "listed": session.listed, "exit_code": done.returncode,
        "seconds": round(done.seconds, 3), "usage_reported": ran.usage is not None,
        **({"agent_usage": ran.usage} if ran.usage and grant is not None else {})}
    if command.preset is not None and ran.report is not None:
        record.update({"preset": command.preset.preset.name,
                       "version": command.preset.version, **ran.report.record()})
    return record


def _account(usage: dict[str, int] | None, grant: Grant | None) -> None:
    """The agent's reported usage as the example's (``None``: not reported), unless the
    gateway served its model: then its calls were counted as they were answered."""
    stats = current_stats()
    if stats is None or (grant is not None and grant.used):
        return
    stats.reported(None if usage is None else (
        usage["input_tokens"], usage["output_tokens"], usage["cached_input_tokens"],
        usage["model_calls"]))


# ------------------------------------------------------------------------ the served model
PROVIDER_ENV = ("ANTHROPIC_AUTH_TOKEN",)
"""Variables an SDK would send instead of the example's key: removed when the model is
served."""


def served_model(gateway: ModelGateway | None, grant: Grant | None) -> dict[str, str]:
    """The placeholders of the run's model as the gateway serves it to one example (none
    without a gateway)."""
    if gateway is None or grant is None:
        return {}
    return {"openai_base_url": gateway.openai_url(grant),
            "anthropic_base_url": gateway.url(grant), "api_key": grant.key}


MODEL_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")
"""The standard variables of the served model (:func:`model_env`)."""


def model_env(env: dict[str, str], served: dict[str, str]) -> dict[str, str]:
    """The agent's environment with the served model's standard variables (:data:`MODEL_ENV`),
    which an unchanged OpenAI or Anthropic SDK reads (``env`` as it is without a served
    model)."""
    if not served:
        return env
    return {**{k: v for k, v in env.items() if k not in PROVIDER_ENV},
            "OPENAI_BASE_URL": served["openai_base_url"], "OPENAI_API_KEY": served["api_key"],
            "ANTHROPIC_BASE_URL": served["anthropic_base_url"],
            "ANTHROPIC_API_KEY": served["api_key"]}


def model_failure(grant: Grant | None, *, agent_failed: bool) -> BaseException | None:
    """The failure of a model call the gateway answered that makes the example's: a
    provider's (after the retry policy: the example was not measured, and a resume runs it
    again), or the model's own when the agent then failed; ``None``: none."""
    raised = grant.stats.raised if grant is not None and grant.stats is not None else []
    provider = [e for e in raised if classify(e) is not None]
    if provider:
        return provider[-1]
    return raised[-1] if raised and agent_failed else None


class AgentsOwnModel(BaseChatModel):
    """The model of an ``--agent-cmd`` run without ``--model``: the agent's own. Nothing in
    the harness calls it (with ``--model`` the run's model is served instead)."""

    model_name: str = "agent"

    @property
    def _llm_type(self) -> str:
        return "agent-cmd"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        raise ToolevalError("an --agent-cmd run calls no model: the agent brings its own")


class ServedAgent(Strategy):
    """An agent command playing the agent part of a split (the strategy named in the run):
    its workflow is :class:`ExternalAgent`."""

    accepts_agent = False

    def __init__(self, benchmark: str, name: str, io_for: Callable[[Path | None], AgentIO],
                 command: AgentCommand) -> None:
        self.benchmark, self.name = benchmark, name
        self.io_for, self.command = io_for, command

    def build(self, ctx: StrategyContext) -> Runnable[Any, Any]:
        if ctx.tool_server is None:
            raise ToolevalError("--agent-cmd runs inside a run: it needs the run's MCP server")
        agent = ExternalAgent(self.io_for(ctx.data_dir), ctx.tool_server(), self.command,
                              gateway=ctx.model_gateway() if ctx.model_gateway else None)
        if self.command.sandbox is not None:
            agent.hidden = tuple(hidden_paths(ctx.data_dir)) + self.command.sandbox.hide

        async def run(state: dict[str, Any]) -> dict[str, Any]:
            return await agent(state)

        return RunnableLambda(run, name=f"agent-cmd-{self.command.name}")


__all__ = ["MAX_COUNT", "MAX_EVENTS", "MAX_OUTPUT", "MODEL_ENV", "NO_TOOLS", "AgentCommand",
           "AgentCommandError", "AgentsOwnModel", "ExternalAgent", "Ran", "ServedAgent", "failure",
           "model_env", "model_failure", "outcome", "process_record", "read_usage", "render",
           "run_process", "served_model", "served_variables"]
