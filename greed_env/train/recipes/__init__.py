"""The recipes behind docs/results.md, reachable as ``greed train recipe NAME [ARGS] [-- TRAIN ARGS]``.

A recipe trains several seeds of one published setting (each seed a ``greed train`` run in a
subprocess, so its CPU time is its own), then prints one Markdown row per seed with the spread:

* :mod:`greed_env.train.recipes.turn`: ``greed train solo`` on the turn objective, scored by
  the policy's exact expected turn score against the solver's optimum;
* :mod:`greed_env.train.recipes.duel`: the turn stage, then ``greed train duel`` against the
  optimal duel bot, scored by the win rate (with chains of stages, soups and held-out games).

Arguments after ``--`` go to the ``greed train`` runs unchanged. Importing this package does
not import torch.
"""

from __future__ import annotations

RECIPES: dict[str, tuple[str, str]] = {
    "turn": ("greed_env.train.recipes.turn", "seeds of the turn recipe (Solitaire-v0), exact value vs the solver"),
    "duel": ("greed_env.train.recipes.duel", "seeds of the two-stage duel recipe vs the optimal duel bot"),
}
"""Recipe name -> (module with ``main(argv, prog)``, one-line description)."""
