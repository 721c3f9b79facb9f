"""Search a tap-order rule set for keeps that the action catalog cannot tell apart.

Under tap-order rules one multiset of dice can be read several ways, and the catalog gives each
distinct outcome of a position its own action: a (dice, reading) pair, plus the alternate fill
readings of :func:`greed_env.spaces.catalog.fill_alternates`. This script checks that claim
over a wide set of positions, not only those the catalog's own search visits:

* every keep of one to ``num_dice`` dice (as part of a roll, and as a whole fresh roll), under
  every carry-over of open straights (each set of fill faces) and working three pairs (none,
  or any three faces) with no working set;
* every keep holding all six faces (the only keeps where a working set's dice take part in a
  combination: a large straight), under every set of working-set faces as well.

Working sets otherwise only hold their own faces aside and grow by them, the same in every tap
order, so these cover the ways two tap orders of one keep can part. A pair of outcomes that
map to one action is printed with both tap orders; the exit status is 1 if any is found.
About 4-5 minutes per rule set on one core.

Usage::

    python scripts/catalog_collisions.py progressive trippn
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import combinations, combinations_with_replacement

from greed_env.rules import Carry, fill_faces, keep_readings, resolve_rules
from greed_env.spaces.catalog import ActionCatalog

FACES = (1, 2, 3, 4, 5, 6)


def carries(rules_fill: tuple[int, ...], sets: tuple[int, ...]) -> list[Carry]:
    """Every carry-over of open straights and working three pairs beside working ``sets``."""
    fills = [tuple(f for i, f in enumerate(rules_fill) if mask >> i & 1) for mask in range(1 << len(rules_fill))]
    free = [f for f in FACES if not sets[f - 1]]
    pairs = [(), *combinations(free, 3)]
    return [Carry(sets, fl, pr) for fl in fills for pr in pairs]


def search(name: str) -> int:
    """Print the colliding positions of rule set ``name``; return how many there are."""
    rules = resolve_rules(name)
    if not rules.carry_over:
        print(f"{name}: order-free rules, one reading per keep")
        return 0
    catalog = ActionCatalog(rules)
    started = time.perf_counter()
    found = checked = 0
    keeps = [d for n in range(1, rules.num_dice + 1) for d in combinations_with_replacement(FACES, n)]
    six = [d for d in keeps if len(set(d)) == 6]
    jobs = [((0,) * 6, keeps)]
    jobs += [(tuple(3 * (m >> i & 1) for i in range(6)), six) for m in range(1, 64)]
    for sets, dice_list in jobs:
        for carry in carries(fill_faces(rules), sets):
            for dice in dice_list:
                for fresh in (False, True) if len(dice) == rules.num_dice else (False,):
                    seen: dict[int, tuple[int, ...]] = {}
                    for opt in keep_readings(rules, dice, carry, fresh):
                        checked += 1
                        action = catalog.index_of(opt)
                        if action in seen:
                            found += 1
                            print(f"{name}: {carry.describe() or 'nothing working'}: taps {seen[action]} and "
                                  f"{opt.taps} share action {action} ({catalog.labels[action]})")
                        seen[action] = opt.taps
    took = time.perf_counter() - started
    print(f"{name}: {checked:,} keep readings checked in {took:.0f} s, {found} sharing an action; "
          f"alternate keeps: {catalog.n - (catalog.size_of_version(2) or catalog.n)}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rules", nargs="+", help="preset names")
    args = parser.parse_args(argv)
    try:
        return 1 if sum(search(name) for name in args.rules) else 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
