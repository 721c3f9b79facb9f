"""CPU cost of the masked action distribution in one PPO minibatch, per preset's action count.

A PPO update builds the masked categorical distribution of every minibatch position, takes the
log-probability of the actions played and the entropy, and back-propagates through them. This
times that step alone (no network) on random logits for 2,048 positions, with sb3-contrib's
``MaskableCategorical`` and with :class:`~greed_env.train.network.LeanMaskableCategorical`
(``--lean-masking``), one thread, CPU seconds (``time.process_time``).

Usage::

    python scripts/bench_masked_dist.py --presets ten_thousand progressive
"""

from __future__ import annotations

import argparse
import time

import torch
from sb3_contrib.common.maskable.distributions import MaskableCategorical

from greed_env.spaces.catalog import ActionCatalog
from greed_env.train.network import LeanMaskableCategorical


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", nargs="+", default=["ten_thousand", "progressive"])
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    for name in args.presets:
        n = ActionCatalog(name).n
        gen = torch.Generator().manual_seed(0)
        raw = torch.randn(args.batch, n, generator=gen)
        masks = torch.rand(args.batch, n, generator=gen) < 0.02
        masks[:, 0] = True
        actions = torch.zeros(args.batch, dtype=torch.long)
        for cls in (MaskableCategorical, LeanMaskableCategorical):
            logits = raw.clone().requires_grad_(True)
            t0 = time.process_time()
            for _ in range(args.repeats):
                dist = cls(logits=logits)
                dist.apply_masking(masks)
                (-(dist.log_prob(actions).mean() + 0.01 * dist.entropy().mean())).backward()
            ms = (time.process_time() - t0) / args.repeats * 1000
            print(f"{name:14s} {n:5d} actions  {cls.__name__:24s} {ms:7.1f} ms CPU per minibatch")


if __name__ == "__main__":
    main()
