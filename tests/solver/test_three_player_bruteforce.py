"""The three-player solver against an independent brute force over greed_env.rules.game.

The brute force walks the engine itself (``legal_moves`` / ``apply`` / ``chance_outcomes`` /
``apply_roll``) once to build the graph of every position reachable within a turn, then runs
plain value iteration of *vectors* over it: every player to move picks the move best for
itself (the others' values following its choice), chance nodes average, and the turn starts
are read from the last sweep's values. It
knows nothing of turn totals, roll groups, levels, cycles, policy iteration, linear systems or
the final round's tables: the final round is played out move by move. Ties for the mover are
broken as the solver documents (bank before roll; the keep of fewest dice, then fewest points).
Configurations are tiny (two dice, targets of a few hundred points) so that it runs in seconds.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from greed_env.rules import (
    BANK,
    Phase,
    State,
    apply,
    apply_roll,
    chance_outcomes,
    current_keep_options,
    legal_moves,
    new_game,
    preset,
)
from greed_env.solver.three import solve_three, three_values

sys.setrecursionlimit(20_000)

TWO_DICE = {"num_dice": 2, "straights": (), "three_pairs": 0}
Vector = tuple[float, float, float]


def _key(s: State) -> State:
    """The position without what these rules never read: the event text and turn counters
    (no fixed number of rounds, entry until made, the round horizon far away)."""
    return s._replace(event="", rounds=0, turns=(0, 0, 0))


class StateGraph:
    """Every engine position reachable within the turns that start at the given positions.

    A node is a chance node (its rolls and their probabilities), a decision (the player to move
    and its moves' successors, in tie-break order: bank first, then the keep of fewest dice and
    points), a turn start of the next player (a leaf read from the current estimates) or the
    end of the game (the seats' shares). The final round is part of the graph, played out.
    ``order`` lists the nodes with every successor before its node (the positions inside
    turns are acyclic: every keep adds points).
    """

    def __init__(self, rules: Any, force_bank: Callable[[State], bool]) -> None:
        self.rules = rules
        self.force_bank = force_bank
        self.index: dict[State, int] = {}
        self.kind: list[tuple[Any, ...]] = []
        self.order: list[int] = []
        self._live: list[int] | None = None

    def add(self, s: State) -> int:
        k = _key(s)
        hit = self.index.get(k)
        if hit is not None:
            return hit
        i = len(self.kind)
        self.index[k] = i
        self.kind.append(())
        if s.phase == Phase.OVER:
            node: tuple[Any, ...] = ("over", s.shares)
        elif not s.endgame and s.player != 0 and s.phase in (Phase.ROLL, Phase.START):
            p = s.player
            node = ("leaf", (s.scores[p], s.scores[(p + 1) % 3], s.scores[(p + 2) % 3]), p)
        elif s.phase in (Phase.ROLL, Phase.ORDER_ROLL):
            node = ("chance", [(prob, self.add(apply_roll(self.rules, s, roll)))
                               for roll, prob in chance_outcomes(self.rules, s)])
        else:
            moves = legal_moves(self.rules, s)
            if s.phase == Phase.CONTINUE and BANK in moves and self.force_bank(s):
                moves = [BANK]
            if s.phase == Phase.KEEP:
                size = {o.taps: (len(o.dice), o.score) for o in current_keep_options(self.rules, s)}
                moves = sorted(moves, key=lambda m: size.get(m.taps, (99, 0)))
            else:
                moves = sorted(moves, key=lambda m: m != BANK)
            node = ("move", s.player, [self.add(apply(self.rules, s, m)) for m in moves])
        self.kind[i] = node
        self.order.append(i)
        return i

    def evaluate(self, est: dict[tuple[int, int, int], Vector], val: np.ndarray | None = None) -> np.ndarray:
        """Every node's value to the three seats, the turn starts read from ``est``. With
        ``val`` (the last sweep's values) only the nodes that reach a turn start are redone:
        the final round and the ends of games never change."""
        fresh = val is None
        if val is None:
            val = np.zeros((len(self.kind), 3))
        for i in self.order if fresh else self.live:
            node = self.kind[i]
            if node[0] == "over":
                val[i] = node[1]
            elif node[0] == "leaf":
                w, p = est[node[1]], node[2]
                for k in range(3):
                    val[i, (p + k) % 3] = w[k]
            elif node[0] == "chance":
                val[i] = 0.0
                for prob, j in node[1]:
                    val[i] += prob * val[j]
            else:
                player, succ = node[1], node[2]
                best = succ[0]
                for j in succ[1:]:
                    if val[j, player] > val[best, player]:
                        best = j
                val[i] = val[best]
        return val

    @property
    def live(self) -> list[int]:
        """The nodes, in ``order``, from which a turn start (a leaf) can be reached."""
        if self._live is None:
            reach = [False] * len(self.kind)
            for i in self.order:
                node = self.kind[i]
                if node[0] == "leaf":
                    reach[i] = True
                elif node[0] == "chance":
                    reach[i] = any(reach[j] for _, j in node[1])
                elif node[0] == "move":
                    reach[i] = any(reach[j] for j in node[2])
            self._live = [i for i in self.order if reach[i]]
        return self._live


def _brute_force(rules: Any, margin: int, final_margin: int) -> dict[tuple[int, int, int], Vector]:
    """Vector values at every turn start ``(a, b, c)`` (mover first), by value iteration.

    Truncation: the mover banks at ``target + margin`` points, the first of the final round at
    ``final_margin`` past the best score (both beyond the solver's caps, so the brute force
    also checks that rolling on there does not pay), the last as soon as it beats it."""
    thr = rules.entry_threshold
    scores = [x for x in range(0, rules.target, 50) if x == 0 or x >= thr]
    keys = [(a, b, c) for a in scores for b in scores for c in scores]

    def force(s: State) -> bool:
        p = s.player
        if s.endgame:
            top = max(s.scores[q] for q in range(3) if q != p)
            if len(s.final_left) == 1:  # the last turn: past the best score nothing is gained
                return s.scores[p] + s.turn_total > top
            return s.scores[p] + s.turn_total > top + final_margin
        return s.scores[p] + s.turn_total >= rules.target + margin

    graph = StateGraph(rules, force)
    roots = {}
    for key in keys:
        start = new_game(rules, 3, first_player=0)
        roots[key] = graph.add(start._replace(scores=key, entered=tuple(thr == 0 or x > 0 for x in key)))
    est: dict[tuple[int, int, int], Vector] = dict.fromkeys(keys, (1 / 3, 1 / 3, 1 / 3))
    val = None
    for _ in range(2000):
        val = graph.evaluate(est, val)
        new = {k: (float(val[i, 0]), float(val[i, 1]), float(val[i, 2])) for k, i in roots.items()}
        change = max(abs(new[k][i] - est[k][i]) for k in keys for i in range(3))
        est = new
        if change < 1e-13:
            return est
    raise AssertionError("value iteration did not converge")


@pytest.mark.parametrize(
    ("name", "overrides"),
    [
        ("ten_thousand", {**TWO_DICE, "entry_threshold": 100, "target": 150}),
        ("ten_thousand", {**TWO_DICE, "entry_threshold": 0, "target": 100}),
        ("farkle", {**TWO_DICE, "entry_threshold": 100, "target": 200}),
    ],
)
def test_three_player_matches_brute_force(name: str, overrides: dict[str, Any]) -> None:
    rules = preset(name, **overrides)
    table = solve_three(rules)
    v = three_values(table)
    brute = _brute_force(rules, table.meta.get("max_margin_points", 0) + 100, 150)
    for (a, b, c), val in brute.items():
        got = v[a // 50, b // 50, c // 50]
        assert np.max(np.abs(got - np.array(val))) < 1e-9, ((a, b, c), got, val)
        assert abs(sum(val) - 1.0) < 1e-9
    assert table.arrays["mix_state"].shape == (0, 3)
