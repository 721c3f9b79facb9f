"""One-line summaries of what a bot card says about its strength (for listings and cards)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["summarize_card", "summarize_evaluation"]


def summarize_card(card: Mapping[str, Any]) -> str:
    """The measured strength stated by a bot card: the training run's own evaluation (for
    example points per turn beside the optimum) and the card's match records."""
    parts = []
    training = card.get("training")
    ev = training.get("evaluation") if isinstance(training, Mapping) else None
    if isinstance(ev, Mapping) and isinstance(ev.get("mean"), int | float):
        units = ev.get("units", "")
        text = f"{ev.get('objective', 'objective')}: {ev['mean']:.3g} ± {float(ev.get('ci95', 0.0)):.2g} {units}"
        if isinstance(ev.get("optimal"), int | float):
            text += f" (optimal {ev['optimal']:.4g})"
        parts.append(text)
    records = card.get("evaluation") or []
    if records:
        parts.append(summarize_evaluation(records))
    return "; ".join(p for p in parts if p)


def summarize_evaluation(records: Iterable[Mapping[str, Any]]) -> str:
    """One line per the card's evaluation records, e.g. ``vs random 97.5% [96.1-98.4] (n=400)``."""
    parts = []
    for r in records:
        if "score_rate" in r:
            lo, hi = r.get("ci95", [0, 1])
            parts.append(f"vs {r['opponent']} {100 * r['score_rate']:.1f}% [{100 * lo:.1f}-{100 * hi:.1f}] (n={r['games']})")
        elif "mean_turn_score" in r:
            lo, hi = r.get("ci95", [0, 0])
            parts.append(f"turn score {r['mean_turn_score']:.0f} [{lo:.0f}-{hi:.0f}] (n={r['turns']})")
    return "; ".join(parts)
