"""MaskablePPO against the exact solver: several seeds of the turn recipe, with their spread.

The recipe lives in :mod:`greed_env.train.recipes.turn` (``greed train recipe turn``); this
script runs it with the same arguments, e.g.::

    python benchmarks/bench_ppo.py --rules ten_thousand --seeds 1 2 3 --jobs 3
    python benchmarks/bench_ppo.py --rules progressive --seeds 1 -- --net-width 64
"""

from __future__ import annotations

import sys

from greed_env.train.recipes.turn import main

if __name__ == "__main__":
    sys.exit(main(prog="bench_ppo.py"))
