"""MaskablePPO against the optimal duel bot: several seeds of the two-stage recipe, with spread.

The recipe lives in :mod:`greed_env.train.recipes.duel` (``greed train recipe duel``); this
script runs it with the same arguments, e.g.::

    python benchmarks/bench_ppo_duel.py --seeds 1 2 3 --jobs 3
    python benchmarks/bench_ppo_duel.py --seeds 1 2 3 --jobs 3 --tag margin --after ppo \
        --duel-steps 6000000 -- --features margin --final-round-near 0.5 --ent-coef 0.001
"""

from __future__ import annotations

import sys

from greed_env.train.recipes.duel import main

if __name__ == "__main__":
    sys.exit(main(prog="bench_ppo_duel.py"))
