"""Regret: the gap between the move played and the solver's best, and its grouping by situation."""

from __future__ import annotations

import itertools

import numpy as np

from greed_env.rules import Move, Phase, State
from greed_env.spaces.catalog import ActionCatalog

TURN_BUCKETS = (0, 300, 600, 1000, 2000)
"""Lower edges of the turn-total buckets used to group regret by situation."""
LEAD_BUCKETS = (-3000, -1000, 0, 50, 1050, 3050)
"""Edges of the banked-lead buckets (before the final round) used to group regret by situation."""




def banked_lead(state: State) -> int:
    """The deciding seat's banked score less the best banked score of the other seats."""
    others = [v for i, v in enumerate(state.scores) if i != state.player]
    return state.scores[state.player] - max(others) if others else 0


def regret_of(
    catalog: ActionCatalog, values: list[tuple[Move, float]], state: State, move: Move, minimize: bool
) -> tuple[float, float]:
    """(regret of ``move``, best value) from the solver's move values."""
    by_id = {catalog.index_of(m, state): float(v) for m, v in values}
    chosen = by_id[catalog.index_of(move, state)]
    best = min(by_id.values()) if minimize else max(by_id.values())
    return (chosen - best if minimize else best - chosen), best



def _bucket_labels() -> list[str]:
    edges = list(TURN_BUCKETS)
    labels = [f"{a}-{b - 50}" for a, b in itertools.pairwise(edges)]
    return [*labels, f"{edges[-1]}+"]


def regret_by_situation(table: dict[str, np.ndarray]) -> dict[str, list[tuple[str, int, float, float]]]:
    """Mean regret grouped by phase and dice, by turn-total bucket and, in games of several
    seats, by the decider's banked lead (final-round decisions apart).

    Returns ``{"dice": [(label, decisions, mean regret, share optimal)], "turn_total": [...],
    "lead": [...]}``.
    """
    reg = table.get("regret", np.zeros(0))
    out: dict[str, list[tuple[str, int, float, float]]] = {"dice": [], "turn_total": [], "lead": []}
    if reg.size == 0:
        return out
    phase, dice, total = table["phase"], table["dice"], table["turn_total"]

    def add(group: str, label: str, sel: np.ndarray) -> None:
        if sel.any():
            out[group].append((label, int(sel.sum()), float(reg[sel].mean()), float((reg[sel] <= 1e-9).mean())))

    for ph, word in ((Phase.KEEP, "keep"), (Phase.CONTINUE, "bank/roll")):
        for d in sorted(set(dice[phase == ph].tolist())):
            add("dice", f"{word}, {d} dice", (phase == ph) & (dice == d))
    bucket = np.searchsorted(np.asarray(TURN_BUCKETS), total, side="right") - 1
    for b, label in enumerate(_bucket_labels()):
        add("turn_total", label, bucket == b)
    lead, final = table.get("lead"), table.get("final")
    if lead is None or final is None or not (lead.any() or final.any()):
        return out
    edges = list(LEAD_BUCKETS)
    before = final == 0
    add("lead", "final round", final != 0)
    add("lead", f"lead below {edges[0]}", before & (lead < edges[0]))
    for a, b in itertools.pairwise(edges):
        span = f"{a}" if b - a == 50 else f"{a}..{b - 50}"
        add("lead", f"lead {span}", before & (lead >= a) & (lead < b))
    add("lead", f"lead {edges[-1]}+", before & (lead >= edges[-1]))
    return out
