"""Reports of evaluations and training runs: learning curves, regret plots, a Markdown report."""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from greed_env.evaluation.regret import regret_by_situation
from greed_env.evaluation.result import EvalResult
from greed_env.files import atomic_write_text, atomic_write_with


def learning_curve(run_dir: str | Path) -> list[dict[str, float]]:
    """Evaluation rows of a training run: ``eval.csv`` in the run directory, or else the
    ``eval/value`` scalars of its TensorBoard event files.

    Each row has ``step`` and ``value`` and, when logged, ``ci95``, ``optimal`` and
    ``regret_estimate``.

    Raises:
        FileNotFoundError: the directory has neither.
    """
    run_dir = Path(run_dir)
    csv_path = run_dir / "eval.csv"
    if csv_path.is_file():
        with csv_path.open(newline="") as fh:
            rows = [
                {k: float(v) for k, v in row.items() if v not in ("", None)}
                for row in csv.DictReader(fh)
            ]
        return sorted(rows, key=lambda r: r["step"])
    events = sorted(run_dir.rglob("events.out.tfevents.*"))
    if not events:
        raise FileNotFoundError(f"{run_dir} holds neither eval.csv nor TensorBoard event files")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    by_step: dict[int, dict[str, float]] = {}
    for path in events:
        acc = EventAccumulator(str(path))
        acc.Reload()
        tags = set(acc.Tags().get("scalars", []))
        for tag, key in (("eval/value", "value"), ("eval/optimal", "optimal"), ("eval/ci95", "ci95")):
            if tag in tags:
                for ev in acc.Scalars(tag):
                    by_step.setdefault(ev.step, {"step": float(ev.step)})[key] = ev.value
    return [by_step[s] for s in sorted(by_step) if "value" in by_step[s]]



def _plot_regret(result: EvalResult, path: Path) -> bool:
    groups = regret_by_situation(result.decisions_table)
    if not groups["dice"]:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, key, title in ((axes[0], "dice", "by decision and dice"), (axes[1], "turn_total", "by turn total")):
        rows = groups[key]
        ax.bar(range(len(rows)), [r[2] for r in rows], color="tab:red")
        ax.set_xticks(range(len(rows)), [r[0] for r in rows], rotation=45, ha="right", fontsize=8)
        ax.set_title(f"mean regret {title}")
        ax.set_ylabel(f"regret ({_regret_unit(result.objective)})")
    fig.suptitle(f"{result.bot} - {result.rules.name} {result.objective}")
    fig.tight_layout()
    try:
        atomic_write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    finally:
        plt.close(fig)
    return True


def plot_learning_curves(
    runs: dict[str, list[dict[str, float]]],
    path: str | Path,
    optimal: float | None,
    units: str,
    minimize: bool = False,
) -> bool:
    """Plot evaluation rows of one or more runs against steps and against CPU minutes.

    Each run is drawn with its exact value where it was logged (``exact``), else the
    regret-based estimate, else the measured mean with its 95% band; ``optimal`` is the dashed line. Returns False when no run has rows.
    """
    runs = {name: rows for name, rows in runs.items() if rows}
    if not runs:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with_cpu = all(all("cpu_s" in r for r in rows) for rows in runs.values())
    n_rows = 2 if optimal else 1
    fig, axes = plt.subplots(
        n_rows, 2 if with_cpu else 1, figsize=(12 if with_cpu else 7, 3.6 * n_rows), squeeze=False
    )
    for name, rows in runs.items():
        use_exact = all("exact" in r for r in rows)
        use_regret = not use_exact and all("regret_estimate" in r for r in rows)
        key, ci_key = ("regret_estimate", "regret_estimate_ci95") if use_regret else ("value", "ci95")
        if use_exact:
            key, ci_key = "exact", "no-ci"
        vals = np.array([r[key] for r in rows])
        ci = np.array([r.get(ci_key, 0.0) for r in rows])
        label = name + (" (optimal - regret)" if use_regret else " (exact)" if use_exact else "")
        xs = [("environment steps", np.array([r["step"] for r in rows]))]
        if with_cpu:
            xs.append(("CPU minutes (training and evaluations)", np.array([r["cpu_s"] for r in rows]) / 60))
        for col, (xlabel, x) in enumerate(xs):
            for row in range(n_rows):
                ax = axes[row][col]
                ax.plot(x, vals, marker="o", ms=3, label=label)
                ax.fill_between(x, vals - ci, vals + ci, alpha=0.2)
                ax.set_xlabel(xlabel)
    for row in range(n_rows):
        for ax in axes[row]:
            if optimal:
                ax.axhline(optimal, color="k", ls=":", label=f"optimal {optimal:.4g}")
            ax.set_ylabel(units if row == 0 else f"{units} (zoom: within 2% of optimal)")
            if row == 1 and optimal:
                worse, better = 0.02 * abs(optimal), 0.005 * abs(optimal)
                ax.set_ylim(*((optimal - better, optimal + worse) if minimize else (optimal - worse, optimal + better)))
            ax.legend(fontsize=7)
    fig.tight_layout()
    try:
        atomic_write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    finally:
        plt.close(fig)
    return True


def _regret_unit(objective: str) -> str:
    return {"turn": "points", "race": "turns", "duel": "win probability"}[objective]


def write_report(
    result: EvalResult,
    out_dir: str | Path,
    run_dir: str | Path | Sequence[str | Path] | None = None,
    command: str | None = None,
) -> Path:
    """Write ``report.md`` with ``regret.png`` (and ``learning_curve.png`` for run dirs).

    Returns the path of the Markdown report.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    r = result
    unit = _regret_unit(r.objective)
    lines = [
        f"# Evaluation: {r.bot}",
        "",
        f"- rules: `{r.rules.name}` (fingerprint `{r.rules.fingerprint}`)",
        f"- objective: `{r.objective}`" + (f", opponent `{r.opponent}`, seats balanced" if r.opponent else ""),
        f"- episodes: {r.episodes:,} (seed {r.seed}), {r.wall_s:.1f} s",
    ]
    if command:
        lines.append(f"- command: `{command}`")
    lines += [
        "",
        "| measure | value |",
        "|---|---|",
        f"| {r.units} (95% CI) | {r.score.fmt(4 if r.objective == 'duel' else 2)} |",
        f"| optimal (solver) | {r.optimal:.4f} |",
        f"| ratio to optimal | {100 * r.ratio:.2f}% |",
    ]
    if r.exact is not None:
        lines.append(
            f"| exact value of the bot's play (every roll enumerated) | {r.exact:.4f} "
            f"({100 * (r.exact_ratio or 0.0):.3f}% of optimal) |"
        )
    if r.regret_estimate is not None:
        lines.append(
            f"| optimal - regret estimate (95% CI) | {r.regret_estimate.fmt(4)} "
            f"({100 * (r.regret_estimate.mean / r.optimal if r.objective != 'race' else r.optimal / r.regret_estimate.mean):.2f}%) |"
        )
    if r.decisions:
        lines += [
            f"| decisions with regret measured | {r.decisions:,} |",
            f"| mean regret per decision ({unit}) | {r.mean_regret:.5g} |",
            f"| worst regret ({unit}) | {r.worst_regret:.5g} |",
            f"| optimal decisions | {100 * r.optimal_share:.2f}% |",
        ]
    groups = regret_by_situation(r.decisions_table)
    if groups["dice"]:
        lines += [
            "",
            "## Regret by situation",
            "",
            "A group's share of all regret says where the bot loses most. Each kind of group (dice,",
            "turn total, and in games of several seats the banked lead) splits the decisions apart.",
            "",
            "| situation | decisions | mean regret | share of all regret | optimal |",
            "|---|---|---|---|---|",
        ]
        whole = float(r.decisions_table["regret"].sum()) or 1.0
        totals = [(f"turn total {label}", *rest) for label, *rest in groups["turn_total"]]
        for label, n, mean, share in groups["dice"] + totals + groups["lead"]:
            lines.append(f"| {label} | {n:,} | {mean:.4g} | {100 * n * mean / whole:.1f}% | {100 * share:.1f}% |")
    if _plot_regret(r, out / "regret.png"):
        lines += ["", "![regret by situation](regret.png)"]
    if run_dir is not None:
        dirs = [run_dir] if isinstance(run_dir, str | os.PathLike) else list(run_dir)
        curves = {Path(d).name: learning_curve(d) for d in dirs}
        if plot_learning_curves(curves, out / "learning_curve.png", r.optimal, r.units, r.objective == "race"):
            lines += ["", "## Learning curve", "", "![learning curve](learning_curve.png)", ""]
            lines += ["| run | evaluations | last step | last value | CPU minutes |", "|---|---|---|---|---|"]
            for name, rows in curves.items():
                if rows:
                    last = rows[-1]
                    shown = last.get("exact", last.get("regret_estimate", last["value"]))
                    cpu = f"{last['cpu_s'] / 60:.1f}" if "cpu_s" in last else "-"
                    lines.append(f"| {name} | {len(rows)} | {int(last['step']):,} | {shown:.4f} | {cpu} |")
    return atomic_write_text(out / "report.md", "\n".join(lines) + "\n")
