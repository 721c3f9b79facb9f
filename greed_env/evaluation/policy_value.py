"""Exact value of a bot's one-turn play, by enumerating every roll it can meet.

Simulation measures a bot's mean turn score with a standard error of about 540 / sqrt(n)
points (ten_thousand), so telling 99.5% from 99% of the optimum (a 3-point gap) would need
hundreds of thousands of turns. Enumeration needs no sampling at all: from the start of a turn,
every chance node is expanded into its exact roll distribution
(:func:`~greed_env.rules.chance_outcomes`), every decision the bot can reach into its move (a
deterministic bot, asked once, in batches where it declares a batched policy, so a neural
policy runs one forward pass per wave) or its moves with their probabilities (a bot that
samples and declares the distribution it draws from,
:attr:`~greed_env.abilities.Abilities.move_probabilities`: the random bot, a network at a
temperature, a ladder rung), and the resulting graph is solved for its expected banked points.
The result is the expectation the simulation estimates, to floating-point accuracy.

A bot that declares neither a batched policy nor its move probabilities is asked about every
decision twice, with two generators of different seeds; a move that changes with the generator
is refused (:class:`SamplingBotError`): valuing one draw as the bot's play would be a wrong
answer, not an approximation.

The turn is the one of ``Solitaire-v0``'s ``turn`` objective: a single player already on the
board, banked score 0, one turn; its value counts turns whose first roll scores nothing as 0,
as the solver's ``turn`` table does. Turn totals are capped (``cap_points``): a position with
at least that many points in the turn is valued as banking them, and the probability of ever
reaching one is reported, so the cap's effect is bounded (it is far beyond where any sensible
policy banks). Greed's reroll-all can revisit a position, so the graph is solved by iteration
to a fixed point rather than one backward pass.

>>> from greed_env.rules import preset
>>> from greed_env.bots.base import ThresholdBot
>>> res = turn_value(ThresholdBot(bank_at=300), preset("ten_thousand"))
>>> round(res.value, 3), res.decisions > 100
(478.692, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from greed_env.abilities import Abilities, abilities_of
from greed_env.bots.base import Bot, check_rules
from greed_env.bots.play import batch_moves
from greed_env.rules import Phase, Rules, State, apply, apply_roll, chance_outcomes, new_game
from greed_env.rules.game import Move, is_chance

__all__ = ["EnumerationLimit", "SamplingBotError", "TurnValue", "turn_value"]

_ROLL_RNG_SEED = 0
_SUM_TOL = 1e-6  # how far a declared distribution's probabilities may sum from 1


class EnumerationLimit(ValueError):
    """The bot's play reaches more positions than the enumeration was allowed to visit."""


class SamplingBotError(ValueError):
    """The bot's move changes with its generator and it declares no distribution to weight its
    moves by (:attr:`~greed_env.abilities.Abilities.move_probabilities`), or it declares one
    that is not a distribution."""


@dataclass(frozen=True)
class TurnValue:
    """The exact expected points of one turn under a bot's play.

    Attributes:
        value: expected points banked in the turn (first-roll busts count as 0).
        p_cap: probability of reaching a turn total of ``cap_points`` (valued as banking it).
        cap_points: the cap used.
        positions: distinct positions enumerated (chance and decision).
        decisions: distinct decision positions the bot was asked about.
        edges: transitions of the graph (a roll, a move), what the solve iterates over.
        sweeps: fixed-point iterations of the solve (one more than the longest chain on a
            graph without cycles).
    """

    value: float
    p_cap: float
    cap_points: int
    positions: int
    decisions: int
    sweeps: int
    edges: int = 0


def _key(s: State) -> State:
    return s._replace(event="") if s.event else s


def turn_value(
    bot: Bot,
    rules: Rules,
    *,
    cap_points: int = 20_000,
    tol: float = 1e-12,
    max_sweeps: int = 100_000,
    batch: int = 8192,
    rng: np.random.Generator | None = None,
    max_positions: int = 5_000_000,
) -> TurnValue:
    """Exact expected points of one turn played by ``bot`` (see the module docstring).

    A deterministic bot (greedy policies, the solver's bots, threshold bots) is asked once per
    position and that move is its play there; a bot that samples is valued by the distribution
    it declares (:attr:`~greed_env.abilities.Abilities.move_probabilities`), each move weighted
    by its probability. ``rng`` is passed to bots that take one (default: a fixed-seed
    generator). A near-optimal ten_thousand policy meets about 200,000 positions (10-20 s of
    CPU); the random bot on farkle about 1.2 million (about a minute); an untrained policy
    that keeps rolling meets every turn total up to the cap, hence ``max_positions``.

    Raises:
        EnumerationLimit: more than ``max_positions`` positions.
        SamplingBotError: (a ValueError) the bot's move changes with the generator and it
            declares no move probabilities, or its declared probabilities are no distribution.
        RulesMismatchError: the bot declares other rules.
        ValueError: ``cap_points`` not positive, or the solve does not converge in
            ``max_sweeps`` (a policy that can cycle forever without risk).
    """
    if cap_points <= 0:
        raise ValueError(f"cap_points must be positive, got {cap_points}")
    check_rules(bot, rules)
    rng = rng if rng is not None else np.random.default_rng(_ROLL_RNG_SEED)
    solo = rules if rules.min_players <= 1 else rules.replace(min_players=1)
    start = new_game(solo, 1)._replace(entered=(True,))
    graph = _TurnGraph(start, cap_points, max_positions)
    decisions = graph.expand(bot, rules, rng, batch)
    value, p_cap, sweeps = graph.solve(tol, max_sweeps)
    return TurnValue(
        value=value,
        p_cap=p_cap,
        cap_points=int(cap_points),
        positions=len(graph.reward),
        decisions=decisions,
        sweeps=sweeps,
        edges=len(graph.probs),
    )


class _TurnGraph:
    """The positions of one turn under a bot's play and the transitions between them.

    Every position is a node: terminal ones (the turn is over, or its total reached the cap)
    carry their banked points, the others the probability-weighted edges to what follows them
    (a chance node: one edge per roll; a decision: one edge per move the bot may play).
    """

    def __init__(self, start: State, cap_points: int, max_positions: int) -> None:
        self.start = start
        self.cap_points = cap_points
        self.max_positions = max_positions
        self.index: dict[State, int] = {}
        self.reward: list[float] = []  # terminal value, or 0.0
        self.capped: list[bool] = []
        self.terminal: list[bool] = []
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.probs: list[float] = []
        self.root, _ = self.node(start)

    def node(self, s: State) -> tuple[int, bool]:
        """Index of ``s`` (new: True when it still has to be expanded).

        Raises:
            EnumerationLimit: a node past ``max_positions``.
        """
        k = _key(s)
        i = self.index.get(k)
        if i is not None:
            return i, False
        i = len(self.reward)
        if i >= self.max_positions:
            raise EnumerationLimit(
                f"the bot's turns reach more than {self.max_positions:,} positions (raise "
                "max_positions or lower cap_points)"
            )
        self.index[k] = i
        start = self.start
        if s.phase == Phase.OVER or s.turns[0] != start.turns[0]:
            if s.phase == Phase.OVER and s.scores[0] == start.scores[0]:
                gain = s.turn_total
            else:
                gain = s.scores[0] - start.scores[0]
            self._add(float(gain), capped=False, terminal=True)
            return i, False
        if s.turn_total >= self.cap_points:
            self._add(float(s.turn_total), capped=True, terminal=True)
            return i, False
        self._add(0.0, capped=False, terminal=False)
        return i, True

    def _add(self, reward: float, capped: bool, terminal: bool) -> None:
        self.reward.append(reward)
        self.capped.append(capped)
        self.terminal.append(terminal)

    def _edge(self, i: int, t: State, p: float, chance: list[State], decision: list[State]) -> None:
        """An edge ``i -> t`` of probability ``p``; a new ``t`` joins the work list it needs."""
        j, new = self.node(t)
        self.rows.append(i)
        self.cols.append(j)
        self.probs.append(p)
        if new:
            (chance if is_chance(t) else decision).append(t)

    def expand(self, bot: Bot, rules: Rules, rng: np.random.Generator, batch: int) -> int:
        """Expand every position the turn reaches: chance nodes into their exact roll
        distribution, decisions by asking ``bot`` in waves of ``batch`` positions (one batched
        call per wave). Returns the number of decisions asked.

        Raises:
            SamplingBotError: see :func:`turn_value`.
        """
        declared = abilities_of(bot)
        chance: list[State] = [self.start]
        decision: list[State] = []
        decisions = 0
        while chance or decision:
            while chance:
                s = chance.pop()
                i = self.index[_key(s)]
                for roll, p in chance_outcomes(rules, s):
                    self._edge(i, apply_roll(rules, s, roll), p, chance, decision)
            if decision:
                wave, decision = decision[:batch], decision[batch:]
                decisions += len(wave)
                for s, moves in zip(wave, _wave_moves(bot, declared, rules, wave, rng), strict=True):
                    i = self.index[_key(s)]
                    for move, p in moves:
                        self._edge(i, apply(rules, s, move), p, chance, decision)
        return decisions

    def solve(self, tol: float, max_sweeps: int) -> tuple[float, float, int]:
        """``(value, p_cap, sweeps)`` of the root, by Jacobi iteration on V = R (terminal) |
        sum_j P_ij V_j, two values at once: points and the probability of reaching the cap.

        Raises:
            ValueError: no convergence in ``max_sweeps`` sweeps.
        """
        n = len(self.reward)
        r = np.asarray(self.reward)
        term = np.asarray(self.terminal)
        cap_mask = np.asarray(self.capped, dtype=np.float64)
        row = np.asarray(self.rows, dtype=np.int64)
        col = np.asarray(self.cols, dtype=np.int64)
        w = np.asarray(self.probs)
        v = np.where(term, r, 0.0)
        c = cap_mask.copy()
        root = self.root
        for sweeps in range(1, max_sweeps + 1):
            v_new = np.where(term, r, np.bincount(row, weights=w * v[col], minlength=n))
            c_new = np.where(term, cap_mask, np.bincount(row, weights=w * c[col], minlength=n))
            delta = max(float(np.max(np.abs(v_new - v))), float(np.max(np.abs(c_new - c))) * 1e3)
            v, c = v_new, c_new
            if delta <= tol * max(1.0, abs(float(v[root]))):
                return float(v[root]), float(c[root]), sweeps
        raise ValueError(  # pragma: no cover - only a risk-free endless policy gets here
            f"the turn values did not converge in {max_sweeps} sweeps: the policy can keep "
            "rolling without risk forever"
        )


def _wave_moves(
    bot: Bot, declared: Abilities, rules: Rules, wave: Sequence[State], rng: np.random.Generator
) -> list[list[tuple[Move, float]]]:
    """The moves of ``bot`` in each position of ``wave`` with their probabilities: its declared
    distribution, else its one move (a declared batched policy: one call for the wave; any
    other bot asked twice, with ``rng`` and with a generator spawned from it, and refused
    where the two moves differ).

    Raises:
        SamplingBotError: see :func:`turn_value`.
    """
    if declared.move_probabilities is not None:
        return [_distribution(bot, declared.move_probabilities(rules, s)) for s in wave]
    moves = batch_moves(bot, rules, wave, rng)
    if declared.policy is None:
        other = rng.spawn(1)[0]
        for s, move in zip(wave, moves, strict=True):
            again = bot.act(rules, s, other)
            if again != move:
                raise SamplingBotError(
                    f"bot {bot.name!r} plays {move} or {again} in the same position, as its random "
                    "generator draws, and declares no move probabilities "
                    "(Abilities.move_probabilities) to weight them by: its exact value cannot be "
                    "enumerated; measure it by simulation"
                )
    return [[(move, 1.0)] for move in moves]


def _distribution(bot: Bot, pairs: Sequence[tuple[Move, float]]) -> list[tuple[Move, float]]:
    """The declared ``(move, probability)`` pairs, checked, without the moves of probability 0
    and scaled to sum to exactly 1.

    Raises:
        SamplingBotError: a probability that is negative or not finite, or a sum that is not 1.
    """
    out: list[tuple[Move, float]] = []
    total = 0.0
    for move, p in pairs:
        p = float(p)
        if not (math.isfinite(p) and p >= 0.0):
            raise SamplingBotError(f"bot {bot.name!r} declares probability {p!r} for the move {move}")
        if p > 0.0:
            out.append((move, p))
            total += p
    if abs(total - 1.0) > _SUM_TOL:
        moves = ", ".join(str(m) for m, _ in pairs) or "no moves"
        raise SamplingBotError(f"bot {bot.name!r} declares move probabilities summing to {total:.9g}, not 1 ({moves})")
    return [(move, p / total) for move, p in out]
