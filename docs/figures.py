"""The tables of figures in the docs, written from the files that hold the figures.

A block in a Markdown file between ``<!-- figures:NAME -->`` and ``<!-- /figures:NAME -->`` is
the output of :func:`block` for ``NAME``:

* ``optima``: every rule book's exact optima, read from the solver tables shipped in
  ``greed_env/data/tables`` (``not shipped`` where a table is solved on first use or not at all);
* ``bots:PRESET``: the preset's shipped bots with their benchmark rows
  (``leaderboard/*.json``: exact share of the optimal turn value, win rate against
  ``optimal-duel`` with its interval, the regret estimate, the field tasks), their round-robin
  Elo (``agents/PRESET/standings.csv``) and the training script that made them (their card);
* ``ladder``: the difficulty ladder's rungs (``agents/*/ladder.json``);
* ``methods``: per rule book, the strongest whole-game bot of pure PPO beside the strongest of
  PPO with the solver as teacher (their cards and ``PRESET/duel-v1`` rows), with the ladder rung
  of the same strength, CPU-minutes and command;
* ``shipped``: one line per shipped bot (its card's description and headline figure);
* ``tournament:PRESET``: the round robin of ``agents/PRESET/tournament.md``.

``python docs/figures.py`` rewrites the blocks of :data:`FILES` in place; ``--check`` only
says which are stale (exit status 1). ``tests/docs/test_figures.py`` runs the check, so a
doc whose figures and files disagree fails the tests.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from greed_env.benchmark import BenchmarkResult, read_result
from greed_env.rules import PRESETS, preset
from greed_env.solver import SolverError, TableError, load_table

ROOT = Path(__file__).resolve().parents[1]
FILES = ("docs/results.md", "agents/README.md", "docs/bots.md")
BLOCK = re.compile(r"(<!-- figures:(?P<name>[\w:-]+) -->\n)(?P<body>.*?)(<!-- /figures:(?P=name) -->)", re.S)


def _cards(root: Path) -> dict[str, dict[str, Any]]:
    """Shipped bot cards by id (``agents/PRESET/NAME.json`` beside its ``.onnx``)."""
    out = {}
    for path in sorted((root / "agents").glob("*/*.json")):
        if path.with_suffix(".onnx").is_file():
            card = json.loads(path.read_text(encoding="utf-8"))
            out[card["id"]] = card
    return out


def _results(root: Path) -> dict[str, BenchmarkResult]:
    return {r.bot: r for r in (read_result(p) for p in sorted((root / "leaderboard").glob("*.json")))}


def _elo(root: Path, rules: str) -> dict[str, str]:
    """``Elo ± 95%`` per bot name, formatted as ``greed bots`` prints it."""
    path = root / "agents" / rules / "standings.csv"
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = {}
    for row in rows:
        se = float(row["elo_se"])
        out[row["bot"]] = f"{float(row['elo']):.0f} ± {1.96 * se:.0f}" if se > 0 else f"{float(row['elo']):.0f} (anchor)"
    return out


def _pct(value: float, ci: float | None = None) -> str:
    return f"{100 * value:.2f}%" + (f" ± {100 * ci:.2f}" if ci else "")


def _script(card: dict[str, Any]) -> str:
    """The script of ``training/`` that makes a bot like this card's."""
    tr = card.get("training") or {}
    script = str(tr.get("script", ""))
    if script.endswith("rllib_selfplay"):
        return "`training/rllib_selfplay.py`"
    if script.endswith(".duel") or script.endswith(".soup"):
        return "`training/ppo_duel.py`"
    if script.endswith(".solo") and card.get("objective") == "race":
        return "`training/progressive_race.py`"
    if script.endswith(".solo"):
        return "`training/ppo_turn.py`"
    return f"`{script}`"


def optima(root: Path) -> str:
    """Every rule book's exact optima from the shipped solver tables."""
    fmt = {
        "turn": lambda v: f"{v:,.2f} points",
        "entry": lambda v: f"{v:.4f}",
        "race": lambda v: f"{v:.3f} turns",
        "duel": lambda v: f"{v:.6f}",
    }
    lines = [
        "| rule book | turn: expected points | entry: chance to come in this turn | race: expected turns to the target | duel: first player's win probability |",
        "|---|---|---|---|---|",
    ]
    for name in PRESETS:
        rules = preset(name)
        cells = []
        for objective in ("turn", "entry", "race", "duel"):
            try:
                cells.append(fmt[objective](load_table(rules, objective, solve_if_missing=False).headline))
            except (TableError, SolverError):
                cells.append("not shipped")
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def bots(root: Path, rules: str) -> str:
    """The preset's shipped bots and reference bots with their measured strength."""
    cards = {k: v for k, v in _cards(root).items() if k.startswith(rules + "/")}
    results = _results(root)
    elo = _elo(root, rules)
    tasks = [f"{rules}/turn-v1", f"{rules}/duel-v1", f"{rules}/ffa3-threshold-v1", f"{rules}/pot4-v1"]
    have = [t for t in tasks if any(t in {x.task for x in r.results} for r in results.values())]
    heads = {
        f"{rules}/turn-v1": "share of the optimal turn (exact)",
        f"{rules}/duel-v1": "vs optimal-duel (20,000 games; Progressive and Zilch 2,000)",
        f"{rules}/ffa3-threshold-v1": "3 players vs 2 x threshold-300 (pot share)",
        f"{rules}/pot4-v1": "4 players vs 3 x threshold-1000 (pot share)",
    }
    header = ["bot", "made by"]
    for t in have:
        header.append(heads[t])
        if t.endswith("duel-v1"):
            header.append("regret estimate")
    header.append("Elo (round robin)")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    names = [k.split("/", 1)[1] for k in sorted(cards)] + ["threshold-300", "threshold-1000", "random"]
    for name in names:
        bot_id = f"{rules}/{name}"
        res = results.get(bot_id) or results.get(name)
        by = {x.task: x for x in res.results} if res else {}
        made = _script(cards[bot_id]) if bot_id in cards else "heuristic"
        row = [f"`{name}`", made]
        for t in have:
            r = by.get(t)
            if t.endswith("duel-v1"):
                if r is None:
                    row += ["-", "-"]
                else:
                    row.append(_pct(r.value, r.ci95))
                    row.append(_pct(r.extra["regret_estimate"], r.extra["regret_estimate_ci95"]))
            elif r is None:
                row.append("-")
            elif t.endswith("turn-v1"):
                row.append(_pct(r.value, r.ci95 if r.ci95 > 0 else None) + ("" if r.ci95 > 0 else " (exact)"))
            else:
                row.append(_pct(r.value, r.ci95))
        row.append(elo.get(name, "-"))
        if bot_id in cards or any(c != "-" for c in row[2:]):
            lines.append("| " + " | ".join(row) + " |")
    ref = [b for b in elo if b.startswith("optimal-")]
    if ref:
        lines.append("")
        lines.append("Reference in the round robin: " + ", ".join(f"`{b}` Elo {elo[b]}" for b in ref) + ".")
    return "\n".join(lines)


def _teacher(card: dict[str, Any]) -> str:
    """The training card's teacher (``optimal-duel``, ...), "" for pure PPO."""
    teacher = (card.get("training") or {}).get("teacher")
    return str(teacher.get("teacher", "")) if isinstance(teacher, dict) else ""


def _duel_estimate(results: dict[str, BenchmarkResult], bot_id: str, rules: str) -> tuple[float, float] | None:
    """The bot's regret estimate on ``PRESET/duel-v1`` and its interval, if measured."""
    res = results.get(bot_id)
    row = next((x for x in res.results if x.task == f"{rules}/duel-v1"), None) if res else None
    return None if row is None else (row.extra["regret_estimate"], row.extra["regret_estimate_ci95"])


def _rung(root: Path, rules: str, win: float) -> str:
    """The ladder rung whose measured win rate against optimal-duel is nearest ``win``."""
    path = root / "agents" / rules / "ladder.json"
    if not path.is_file():
        return "-"
    rungs = json.loads(path.read_text(encoding="utf-8"))["rungs"]
    best = min(rungs, key=lambda r: abs(r["win_rate"] - win))
    return f"`{best['name']}` ({100 * best['win_rate']:.1f}%)"


def methods(root: Path) -> str:
    """Per rule book, its strongest whole-game bot of pure PPO beside its strongest of PPO with the
    solver as teacher: win rate against optimal-duel by the regret estimate (the board's
    ``PRESET/duel-v1``), the ladder rung of the same strength, CPU-minutes and the command."""
    cards = _cards(root)
    results = _results(root)
    lines = [
        "| rule book | pure PPO: bot, vs optimal-duel | PPO + solver teacher: bot, vs optimal-duel | ladder rung it matches | CPU-minutes (its last stage) | command |",
        "|---|---|---|---|---|---|",
    ]
    for name in PRESETS:
        best: dict[bool, tuple[float, float, str]] = {}
        for bot_id, card in cards.items():
            if not bot_id.startswith(name + "/"):
                continue
            est = _duel_estimate(results, bot_id, name)
            taught = bool(_teacher(card))
            if est is not None and (taught not in best or est[0] > best[taught][0]):
                best[taught] = (est[0], est[1], bot_id)
        if not best:
            continue
        cells = [f"`{name}`"]
        for taught in (False, True):
            if taught in best:
                value, ci, bot_id = best[taught]
                cells.append(f"`{bot_id.split('/', 1)[1]}` {_pct(value, ci)}")
            else:
                cells.append("-")
        if True in best:
            card = cards[best[True][2]]
            training = card.get("training") or {}
            cells.append(_rung(root, name, best[True][0]))
            cells.append(f"{training.get('cpu_time_s', 0) / 60:.1f}")
            command = training.get("command")
            stages = str(command).split(", then ") if command else []
            cells.append(", then ".join(f"`{c}`" for c in stages) if stages else _script(card))
        else:
            cells += ["-", "-", "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ladder(root: Path) -> str:
    """The ladder rungs: measured win rate against optimal-duel and the temperature."""
    docs = {}
    for name in PRESETS:
        path = root / "agents" / name / "ladder.json"
        if path.is_file():
            docs[name] = json.loads(path.read_text(encoding="utf-8"))
    rung_names = sorted({r["name"] for d in docs.values() for r in d["rungs"]})
    lines = [
        "| rule book | " + " | ".join(f"`{n}`" for n in rung_names) + " | games per rung |",
        "|---|" + "---|" * len(rung_names) + "---|",
    ]
    for name, doc in docs.items():
        by = {r["name"]: r for r in doc["rungs"]}
        cells = [
            f"{100 * by[n]['win_rate']:.1f}% ± {100 * by[n]['win_ci95']:.2f} (T {by[n]['temperature']:.4f})" if n in by else "-"
            for n in rung_names
        ]
        games = sorted({r["games"] for r in doc["rungs"]})
        lines.append(f"| `{name}` | " + " | ".join(cells) + f" | {', '.join(f'{g:,}' for g in games)} |")
    return "\n".join(lines)


def _headline(card: dict[str, Any], results: dict[str, BenchmarkResult], rules: str) -> str:
    res = results.get(card["id"])
    by = {x.task: x for x in res.results} if res else {}
    turn, duel = by.get(f"{rules}/turn-v1"), by.get(f"{rules}/duel-v1")
    parts = []
    if card.get("objective") in ("duel", "race") and duel is not None:
        parts.append(
            f"{_pct(duel.value, duel.ci95)} vs optimal-duel "
            f"(regret estimate {_pct(duel.extra['regret_estimate'], duel.extra['regret_estimate_ci95'])})"
        )
    elif card.get("objective") == "selfplay" and f"{rules}/ffa3-threshold-v1" in by:
        r = by[f"{rules}/ffa3-threshold-v1"]
        parts.append(f"{_pct(r.value, r.ci95)} of a 3-player pot vs 2 x threshold-300 (fair 33.33%)")
    if turn is not None and card.get("objective") == "turn":
        parts.append(f"{_pct(turn.value)} of the optimal turn (exact)")
        if duel is not None:
            parts.append(f"{_pct(duel.value, duel.ci95)} vs optimal-duel")
    train_ev = (card.get("training") or {}).get("evaluation") or {}
    if not parts and card.get("objective") == "turn" and train_ev.get("mean") is not None:
        parts.append(
            f"{train_ev['mean']:,.1f} ± {train_ev['ci95']:.1f} {train_ev['units']} "
            f"(simulated, {train_ev['episodes']:,} turns; card)"
        )
    if not parts:
        ev = {e["opponent"]: e for e in card.get("evaluation") or []}
        for opp in ("optimal-duel", "optimal-race", "threshold-1000"):
            if opp in ev:
                e = ev[opp]
                parts.append(
                    f"{100 * e['score_rate']:.1f}% [{100 * e['ci95'][0]:.1f}-{100 * e['ci95'][1]:.1f}] "
                    f"vs {opp} ({e['games']} games, card)"
                )
                break
    return "; ".join(parts)


def shipped(root: Path) -> str:
    """One line per shipped bot: what it is, its headline strength, the script that made it."""
    results = _results(root)
    lines = ["| bot | what it is | measured strength (95%) | Elo | made by |", "|---|---|---|---|---|"]
    for name in PRESETS:
        elo = _elo(root, name)
        for bot_id, card in sorted(_cards(root).items()):
            if not bot_id.startswith(name + "/"):
                continue
            lines.append(
                f"| `{bot_id}` | {card['description']} | {_headline(card, results, name)} | "
                f"{elo.get(bot_id.split('/', 1)[1], '-')} | {_script(card)} |"
            )
    return "\n".join(lines)


def tournament(root: Path, rules: str) -> str:
    """A rule book's round robin: the standings of ``agents/PRESET/standings.csv`` with the Elo
    as ``greed bots`` prints it, then the cross table of ``agents/PRESET/tournament.md``."""
    text = (root / "agents" / rules / "tournament.md").read_text(encoding="utf-8")
    intro = text.split("\n\n")[1].strip()
    cross = text[text.index("Score rate of the row bot") :].strip()
    elo = _elo(root, rules)
    with (root / "agents" / rules / "standings.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    lines = [intro, "", "| rank | bot | Elo (±95%) | score rate | 95% CI | W | D | L | games |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['rank']} | {r['bot']} | {elo[r['bot']]} | {100 * float(r['rate']):.1f}% | "
            f"{100 * float(r['ci_low']):.1f}-{100 * float(r['ci_high']):.1f}% | {r['wins']} | {r['draws']} | "
            f"{r['losses']} | {r['games']} |"
        )
    return "\n".join([*lines, "", cross])


def block(name: str, root: Path = ROOT) -> str:
    """The generated body of block ``name``.

    Raises:
        KeyError: an unknown block name.
    """
    kind, _, arg = name.partition(":")
    makers: dict[str, Callable[[], str]] = {
        "optima": lambda: optima(root),
        "ladder": lambda: ladder(root),
        "methods": lambda: methods(root),
        "shipped": lambda: shipped(root),
        "bots": lambda: bots(root, arg),
        "tournament": lambda: tournament(root, arg),
    }
    return makers[kind]()


def render(text: str, root: Path = ROOT) -> str:
    """``text`` with every figures block regenerated."""
    return BLOCK.sub(lambda m: m.group(1) + block(m.group("name"), root) + "\n" + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files (exit status 1)")
    args = parser.parse_args(argv)
    stale = []
    for rel in FILES:
        path = ROOT / rel
        text = path.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            stale.append(rel)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "stale" if args.check else "rewritten"
    for rel in stale:
        print(f"{rel}: {verb}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
