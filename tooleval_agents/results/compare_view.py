"""How a comparison reads: runs named by what differs between them, and its tables (the
metrics, the paired differences with their CIs, the cost per example) as rows of text.

One rendering for every reader: ``tooleval compare`` prints these tables (rich), its
``--format markdown`` and :meth:`~tooleval_agents.results.compare.Comparison.to_markdown` write
them as Markdown, and the comparison's ``repr`` lays them out as plain text. By default they
show the runs' headline metrics (:attr:`~tooleval_agents.results.compare.Comparison.headline`);
``all_metrics`` shows every one. Metrics that count something per example (tool calls, agent
turns) stand in a table of their own, apart from the 0-100 rates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tooleval_agents.contracts import format_metric

if TYPE_CHECKING:  # annotations only: compare.py renders itself with this module
    from tooleval_agents.results.compare import Comparison, RunData
    from tooleval_agents.results.records import RunConfig


def run_traits(config: RunConfig) -> dict[str, str]:
    """What a run's label may say about it, each as it would read in a label (tool faults
    as ``faults=0.1``: a run without them is the clean one)."""
    options = ",".join(f"{k}={v}" for k, v in sorted(config.strategy_options.items()))
    scoring = ",".join(f"{k}={v}" for k, v in sorted(config.scoring_options.items()))
    return {"benchmark": config.benchmark, "task": config.task, "subset": config.subset,
            "strategy": config.strategy, "model": str(config.model.get("spec")),
            "agent": config.agent or "", "sandbox": sandbox_trait(config),
            "options": options, "scoring": scoring,
            "judge": str((config.judge or {}).get("spec") or ""),
            "faults": _faults_trait(config.tool_faults),
            "limit": f"n={config.dataset.examples}", "epochs": f"epochs={config.epochs}"}


def sandbox_trait(config: RunConfig) -> str:
    """``sealed`` or ``unsealed`` for a run of an agent command (``--agent-sandbox``), else
    empty."""
    if config.agent_cmd is None:
        return ""
    return "unsealed" if config.unsealed else "sealed"


def _faults_trait(faults: Mapping[str, Any] | None) -> str:
    """``faults=0.1`` for a run under tool faults (with its seed when not 0), else empty."""
    if not faults or not faults.get("rate"):
        return ""
    seed = faults.get("seed") or 0
    return f"faults={faults['rate']:g}" + (f",seed={seed}" if seed else "")


def short_labels(runs: Sequence[RunData]) -> dict[str, str]:
    """A short name per run label, made of what differs between the runs (split, strategy,
    model, agent, options, judge, tool faults, limit, epochs: not a truncated directory
    name); runs alike in all of them are numbered."""
    traits = [run_traits(r.config) for r in runs]
    differ = [k for k in traits[0] if len({t[k] for t in traits}) > 1] if traits else []
    names = [" ".join(t[k] for k in differ if t[k]) or "run" for t in traits]
    seen = Counter(names)
    count: Counter[str] = Counter()
    out: dict[str, str] = {}
    for run, name in zip(runs, names, strict=True):
        count[name] += 1
        out[run.label] = f"{name} #{count[name]}" if seen[name] > 1 else name
    return out


@dataclass(frozen=True)
class TextTable:
    """One table of a comparison, as text cells."""

    title: str
    header: list[str]
    rows: list[list[str]]

    def right_aligned(self, column: int) -> bool:
        """Numbers to the right; names, runs and metrics to the left."""
        return column > 0 and self.header[column] not in ("a", "b", "metric")


def shown_metrics(result: Comparison, all_metrics: bool) -> list[str]:
    """The metrics the tables show: every one, or the headline ones."""
    every = [str(m) for m in result.table.index]
    return every if all_metrics or not result.headline else \
        [m for m in every if m in result.headline]


def _num(value: float) -> str:
    return format_metric(value)  # NaN: not run, or nothing to count


def comparison_tables(result: Comparison, *, all_metrics: bool = False) -> list[TextTable]:
    """The comparison's tables: metric x run (rates, then counts per example), the paired
    differences with their CIs, cost per example; runs named by what differs between them
    (:func:`short_labels`)."""
    short = short_labels(result.runs)
    names = shown_metrics(result, all_metrics)
    columns = [short[c] for c in result.table.columns]
    rates = [m for m in names if m not in result.count_metrics]
    counts = [m for m in names if m in result.count_metrics]
    tables = [TextTable(title, ["metric", *columns],
                        [[m, *map(_num, result.table.loc[m].tolist())] for m in chosen])
              for title, chosen in (
                  ("Metrics (0-100, each run over all its scored examples)", rates),
                  ("Counts per example (means over each run's scored examples)", counts))
              if chosen]
    diffs = result.differences[(result.differences["n_examples"] > 0)
                               & result.differences["metric"].isin(names)]
    if not diffs.empty:
        tables.append(TextTable(
            f"Paired differences b - a, {round(100 * result.confidence)}% bootstrap CI "
            f"({result.n_boot} resamples, seed {result.seed}; * the CI excludes 0)",
            ["a", "b", "metric", "diff", "CI", "n"],
            [[short[r["run_a"]], short[r["run_b"]], str(r["metric"]),
              _num(r["diff"]) + ("*" if r["significant"] else ""),
              f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}]", str(r["n_examples"])]
             for r in diffs.to_dict(orient="records")]))
    tables.extend((_cost_table(result, short), _paid_table(result, short)))
    return tables


def recorded_examples(run: RunData) -> str:
    """The examples a run recorded, as the run counts them: ``6``, or ``6 × 3`` (examples
    times epochs) for an ``--epochs`` run, with the attempts when some are missing."""
    recorded = len(run.results)
    if run.config.epochs <= 1:
        return str(recorded)
    examples = len({r.index for r in run.results.values()})
    missing = "" if recorded == examples * run.config.epochs else f" ({recorded} attempts)"
    return f"{examples} × {run.config.epochs}{missing}"


def _usd(value: float, total: float) -> str:
    # NaN: no price known (the total is NaN too), or nothing to divide by (no success)
    if total != total:
        return "unknown price"
    return "n/a" if value != value else f"{value:.5f}"


def _cost_table(result: Comparison, short: dict[str, str]) -> TextTable:
    # every count and mean the costs frame holds, by name: a count added there shows up here
    money = {"cost_per_example_usd": "$/example", "cost_per_success_usd": "$/success"}
    skip = {"cost_usd", "scored", "total_input_tokens", "total_output_tokens", *PAID}
    columns = [c for c in result.costs.columns if c not in skip and (  # all-zero counts: none
        c in money or c == "examples" or (result.costs[c].fillna(0) != 0).any())]
    examples = {r.label: recorded_examples(r) for r in result.runs}  # "6 × 3" with epochs
    rows = []
    for label, row in result.costs.iterrows():
        rows.append([short[str(label)], *(
            _usd(row[c], row["cost_usd"]) if c in money else
            examples.get(str(label), str(int(row[c]))) if c == "examples" else
            str(int(row[c])) if not c.startswith("mean_") else _num(row[c]) for c in columns)])
    return TextTable("Per example (tokens and calls: every recorded example, as in "
                     "summary.json; latency: scored examples)",
                     ["run", *(money.get(c, c.removeprefix("mean_").replace("_", " "))
                               for c in columns)], rows)


PAID = {"paid_calls": "model calls", "paid_input_tokens": "tokens in",
        "paid_output_tokens": "tokens out", "cache_hits": "cache hits", "paid_usd": "$"}
"""The costs frame's columns of what was paid, as the compare table heads them."""


def _paid_table(result: Comparison, short: dict[str, str]) -> TextTable:
    return TextTable("Paid to produce them (every session that wrote the results; the tokens "
                     "above are the answers', cached or not)",
                     ["run", *PAID.values()],
                     [[short[str(label)], *(_usd(row[c], row[c]) if c == "paid_usd"
                                            else str(int(row[c])) for c in PAID)]
                      for label, row in result.costs.iterrows()])


def runs_list(result: Comparison) -> list[str]:
    """Each run's short name and where it is."""
    short = short_labels(result.runs)
    return [f"{short[r.label]}: {r.path or r.config.experiment}" for r in result.runs]


def comparison_notes(result: Comparison, *, all_metrics: bool = False,
                     more: str = "all_metrics=True") -> list[str]:
    """The comparison's notes with the runs' short names, and how many metrics the tables
    leave out (``more``: what shows them)."""
    short = sorted(short_labels(result.runs).items(), key=lambda kv: -len(kv[0]))
    out = []
    hidden = len(result.table.index) - len(shown_metrics(result, all_metrics))
    if hidden:
        out.append(f"{hidden} more metric(s) not shown ({more} shows every one)")
    for note in result.notes:
        for long, name in short:
            note = note.replace(long, name)
        out.append(note)
    return out


def comparison_markdown(result: Comparison, *, all_metrics: bool = False,
                        more: str = "all_metrics=True") -> str:
    """The comparison as Markdown tables, the runs and notes listed under them."""
    lines: list[str] = []
    for table in comparison_tables(result, all_metrics=all_metrics):
        lines += [f"**{table.title}**", "", "| " + " | ".join(table.header) + " |",
                  "|" + "|".join("---:" if table.right_aligned(i) else "---"
                                 for i in range(len(table.header))) + "|",
                  *("| " + " | ".join(_escaped(c) for c in row) + " |" for row in table.rows),
                  ""]
    lines += ["Runs:", "", *(f"- {line}" for line in runs_list(result))]
    notes = comparison_notes(result, all_metrics=all_metrics, more=more)
    lines += ["", *(f"- {note}" for note in notes)] if notes else []
    return "\n".join(lines) + "\n"


def _escaped(cell: str) -> str:
    return cell.replace("|", "\\|")


def comparison_text(result: Comparison, *, all_metrics: bool = False,
                    more: str = "all_metrics=True") -> str:
    """The comparison as plain-text tables (columns padded), the runs and notes under them."""
    blocks = [_plain(table) for table in comparison_tables(result, all_metrics=all_metrics)]
    blocks.append("\n".join(["runs:", *(f"  {line}" for line in runs_list(result))]))
    notes = comparison_notes(result, all_metrics=all_metrics, more=more)
    if notes:
        blocks.append("\n".join(f"- {note}" for note in notes))
    return "\n\n".join(blocks)


def _plain(table: TextTable) -> str:
    widths = [max(len(row[i]) for row in (table.header, *table.rows))
              for i in range(len(table.header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if table.right_aligned(i) else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([table.title, line(table.header), "  ".join("-" * w for w in widths),
                      *map(line, table.rows)])
