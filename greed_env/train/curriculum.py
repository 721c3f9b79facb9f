"""Exploring starts for duels: some training episodes begin at the learner's final-round turn.

In ``ten_thousand`` a player who banks the target gives every other player one last turn, and
that turn decides the game: the player must beat the new leader, so banking short of it loses
for certain. A learner meets that turn in about half its games and only once per game (some 2%
of its decisions), and a policy that comes from single-turn training banks there as usual.
Measured with ``scripts/duel_gap.py``: the turn policy gives away 2.1 points of win rate
against ``optimal-duel`` in the final round alone, and 1.3 were still lost after 3.7M steps of
plain duel training.

:class:`FinalRoundStarts` makes a share of the episodes start there: when an episode (re)starts
the game is replaced, with probability ``fraction``, by a position in which the opponent has
just banked past the target and the learner's last turn begins. The position is built by the
reference rules (the opponent's bank is played by :func:`greed_env.rules.apply`), so it is one
the game can reach: the opponent's score is drawn between the target and
``target + max_over``, the learner's between 0 and the target (0 or at least the entry
threshold), both in solver units. A share ``near`` of the starts draws the learner's score
instead at most ``max_over`` points behind the opponent's, as real games leave it: from uniform
scores the learner mostly trails by more than it can make up, and the decisions that end the
game (bank as soon as the lead is taken) come up in few episodes. With ``warmup`` the start
moves on into that turn: up to ``warmup`` rolls, each followed by a uniformly random legal keep
(drawn from the same generator), so that episodes also begin at bank-or-roll decisions with
points on the table and any number of dice; a roll that busts leaves the start where it was.
With ``near`` as well, both banked scores are then re-drawn so that banking would leave the
learner up to ``max_over / 3`` behind or ahead: the lead taken or just missed. Nothing about the solver is used. The start-state
distribution is all that changes; the per-position returns, and so the optimal policy, are
those of the real game, and evaluations play real games. Episode statistics (``VecMonitor``
inside this wrapper) include the exploring-start episodes.

The same wrapper also starts a share ``scores`` of the episodes at a turn start with both
banked scores drawn (:func:`score_start`), optionally warmed up into the learner's turn and, for
a share ``scores_near``, both in the endgame (the last fifth below the target). A game from
0 : 0 ends in its +-1 reward some 80 learner decisions later; an episode from random scores is
shorter and its return less noisy. The endgame starts target the leak that ``greed eval MODEL
--objective duel --regret-episodes 1000 --out DIR`` shows in its regret by banked lead: a
policy that banks to reach the target just ahead of an opponent close behind it, which hands
the opponent a last turn needing a few hundred points (regret up to 0.4 in win probability).

:class:`EntryStarts` is the single-turn stage's counterpart. ``Solitaire-v0``'s ``turn``
objective is the turn of a player already on the board, so a policy trained on it has never
seen a turn that must reach the entry threshold (1,000 in ``ten_thousand``) before it may bank,
although every game opens with such turns. Measured with ``scripts/duel_keeps.py``: the
turn policy's keeps give away 0.0025 in win probability per game there, the solver's
turn-objective keeps (which do know the threshold) 0.00006, and duel training halves the
policy's loss and no more. The wrapper starts a share of the turn episodes not yet on the
board; their return is still the points banked (nothing, unless the turn reaches the
threshold), which is the turn objective of a player not yet on the board, as the solver has it.

:class:`KeepStarts` starts a share of the turn episodes one decision later: the first roll's
keep is already made, drawn uniformly from the legal moves (every keep, and Greed's reroll of
all six dice), so the positions every first keep leads to are trained whatever keeps the policy
has given up on. Made for ``greed`` (docs/results.md, "Greed's first keep"), where the policy
rerolls all six dice although keeping a single 1 is best, and the position that keep leads to
(100 points, five dice) is rarely reached: the critic read it 56 points low. Measured there
(500k steps): 30% of keep starts bring the critic's readings of those rolls nearer their
returns (313 and 303, where it read 337 and 340) and leave the first keep as it was (97.74%
against 97.65%): the sampled play after the keep still lags greedy play by some 15 points. The returns are those of the real turn.

:class:`RaceStarts` is the race objective's counterpart of the random-score starts: a share of
the races start from a banked score drawn uniformly (:func:`race_score`) instead of 0. Under an
exact target (``progressive``) the race is won only by landing on the target, which a policy
from the turn objective almost never does (the shipped turn bot needs 111 turns on average to
finish a race the optimum finishes in 9), and a race from 0 reaches that endgame only after
some 80 decisions. Started at random scores, a fifth of the episodes begin in the last fifth
below the target and are short, so the endgame is trained from the first update on. The
return is still minus the turns taken from the start, so every start's optimal policy is the
race's.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from greed_env.rules import (
    BANK,
    ROLL,
    Phase,
    Rules,
    State,
    apply,
    apply_roll,
    legal_moves,
    new_game,
    sample_roll,
)
from greed_env.vector import kernels as K

__all__ = [
    "ENDGAME_SHARE",
    "EntryStarts",
    "FinalRoundStarts",
    "KeepStarts",
    "RaceStarts",
    "final_round_start",
    "race_score",
    "score_start",
]

ENDGAME_SHARE = 0.2
"""Endgame random-score starts draw both scores within this share of the target below it
(2,000 points in ``ten_thousand``)."""


def final_round_start(
    rules: Rules,
    learner: int,
    rng: np.random.Generator,
    max_over: int = 3000,
    near: bool = False,
    warmup: int = 0,
) -> State:
    """A two-player position at the start of ``learner``'s final-round turn (see the module).

    ``near``: the learner trails the opponent's new score by ``unit .. max_over`` points
    (multiples of the scoring unit) instead of holding a uniform score below the target.
    ``warmup``: then play ``0 .. warmup`` (uniformly) random roll-and-keep steps of that turn.
    """
    if not rules.final_round or rules.exact_target:
        raise ValueError(f"rules {rules.name!r} have no final round to start from")
    unit = math.gcd(rules.target, rules.entry_threshold, max_over, 50)
    opp = 1 - learner
    target = rules.target
    entry = max(rules.entry_threshold, unit)
    banked = int(rng.integers(0, target // unit)) * unit  # opponent's score before its bank
    banked = max(banked, entry if rules.entry_threshold else 0)
    final = target + int(rng.integers(0, max_over // unit + 1)) * unit
    turn = max(final - banked, entry if banked == 0 else unit)
    low = entry // unit if rules.entry_threshold else 1
    mine = int(rng.integers(low - 1, target // unit))  # low - 1: not on the board yet
    if near:
        deficit = int(rng.integers(1, max_over // unit + 1))
        mine = min(final // unit - deficit, target // unit - 1)
    mine = 0 if mine < low else mine * unit
    s = new_game(rules, 2, first_player=opp)
    scores = [0, 0]
    scores[opp], scores[learner] = banked, mine
    entered = [not rules.entry_threshold, not rules.entry_threshold]
    entered[opp] = entered[opp] or banked > 0
    entered[learner] = entered[learner] or mine > 0
    s = s._replace(
        phase=Phase.CONTINUE,
        scores=tuple(scores),
        entered=tuple(entered),
        turn_total=turn,
        dice=rules.num_dice,
        roll=(),
        fresh=False,
    )
    out = apply(rules, s, BANK)
    if not (out.endgame and out.player == learner):
        raise AssertionError(f"not a final-round start: {out}")
    if not warmup:
        return out
    warm = _warm_up(rules, out, rng, int(rng.integers(0, warmup + 1)))
    if not near or warm.phase != Phase.CONTINUE:
        return warm
    # close to the lead: both scores re-drawn so that banking now would leave me up to
    # max_over / 3 behind or ahead of the opponent (ahead by less than the turn total, as my
    # banked score is under the target and the opponent's at or past it)
    if warm.turn_total < unit:
        return warm
    reach = (max_over // 3) // unit
    lead = int(rng.integers(-reach, min(reach, warm.turn_total // unit - 1) + 1)) * unit
    top = min(target + max_over, target + warm.turn_total - lead - unit)
    theirs = target + int(rng.integers(0, (top - target) // unit + 1)) * unit
    mine = theirs - warm.turn_total + lead
    if mine < max(entry, unit):
        return warm
    scores = list(warm.scores)
    scores[learner], scores[opp] = mine, theirs
    entered = list(warm.entered)
    entered[learner] = True
    return warm._replace(scores=tuple(scores), entered=tuple(entered))


def score_start(
    rules: Rules, learner: int, rng: np.random.Generator, warmup: int = 0, near: int = 0
) -> State:
    """A two-player position at the start of a turn with both banked scores drawn at random.

    Each seat's score is uniform over the scores a game can hold below the target (0, or the
    multiples of the scoring unit from the entry threshold on), or with ``near`` over those
    within ``near`` points of the target (the endgame: whether banking that reaches the target
    leaves enough of a lead to survive the opponent's last turn); the seat to move is drawn too.
    When it is the learner's, ``warmup`` random roll-and-keep steps (``0 .. warmup``) move the
    start on into its turn. A game from 0 : 0 takes some 80 learner decisions to end in a +-1
    reward; these episodes are shorter the later they start, so the critic learns the value of
    every score pair, and the endgame decisions, from returns far less noisy.
    """
    unit = math.gcd(rules.target, rules.entry_threshold, 50)
    low = max(rules.entry_threshold, unit) // unit
    top = rules.target // unit
    if near:
        low = max(low, (rules.target - near) // unit)

    def draw() -> int:
        k = int(rng.integers(low - (0 if near else 1), top))  # low - 1 stands for 0 (not on the board)
        return 0 if k < low else k * unit

    scores = (draw(), draw())
    mover = int(rng.integers(0, 2))
    s = new_game(rules, 2, first_player=mover)
    entered = tuple(bool(rules.entry_threshold == 0 or v > 0) for v in scores)
    s = s._replace(scores=scores, entered=entered)
    if warmup and mover == learner:
        s = _warm_up(rules, s, rng, int(rng.integers(0, warmup + 1)))
    return s


def _warm_up(rules: Rules, state: State, rng: np.random.Generator, steps: int) -> State:
    """``state`` moved on by ``steps`` rolls of its player, each followed by a random legal keep;
    stops at the last position before a roll that would end the turn."""
    player = state.player
    for _ in range(steps):
        s = state
        if s.phase == Phase.CONTINUE:
            if ROLL not in legal_moves(rules, s):
                break
            s = apply(rules, s, ROLL)
        while s.phase in (Phase.START, Phase.ORDER_CHOICE):  # not in final rounds of these rules
            s = apply(rules, s, legal_moves(rules, s)[0])
        if s.phase != Phase.ROLL:
            break
        s = apply_roll(rules, s, sample_roll(rules, s, rng))
        if s.phase != Phase.KEEP or s.player != player:
            break
        keeps = [m for m in legal_moves(rules, s) if m.kind == "keep"]
        if not keeps:
            break
        s = apply(rules, s, keeps[int(rng.integers(len(keeps)))])
        if s.phase == Phase.OVER or s.player != player:
            break
        state = s
    return state


def race_score(rules: Rules, rng: np.random.Generator, near: int = 0) -> int:
    """A banked score drawn uniformly over those a one-player game can hold below the target:
    0, or the multiples of the scoring unit from the entry threshold on (as :func:`score_start`
    draws each seat's); with ``near``, over those within ``near`` points below the target."""
    unit = math.gcd(rules.target, rules.entry_threshold, 50)
    low = max(rules.entry_threshold, unit) // unit
    if near:
        low = max(low, (rules.target - near) // unit)
    k = int(rng.integers(low - (0 if near else 1), rules.target // unit))  # low - 1 stands for 0
    return 0 if k < low else k * unit


class _NativeStarts(VecEnvWrapper):
    """Exploring starts on the native vector env: when episodes (re)start, :meth:`_starts`
    may replace some of them by other positions, played on to the learner's next decision."""

    def __init__(self, venv: VecEnv, what: str) -> None:
        super().__init__(venv)
        inner: Any = venv
        while not hasattr(getattr(inner, "env", None), "batch"):
            if not hasattr(inner, "venv"):
                raise ValueError(f"{what} need the native vector env (--vector native)")
            inner = inner.venv
        self.batch = inner.env.batch
        self.rules = self.batch.rules

    @abstractmethod
    def _starts(self, rows: np.ndarray) -> dict[int, State]:
        """The positions that replace some of the episodes starting in ``rows``, by row."""

    def _restart(self, rows: np.ndarray, obs: np.ndarray) -> np.ndarray:
        starts = self._starts(rows)
        if starts:
            self.batch.restart_from(starts)
            picked = np.fromiter(starts, dtype=np.int64)
            obs = np.array(obs, copy=True)
            obs[picked] = self.batch.obs[picked]
        return obs

    def reset(self) -> Any:
        obs = self.venv.reset()
        return self._restart(np.arange(self.num_envs), obs)

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        return self._restart(np.flatnonzero(dones), obs), rewards, dones, infos


class _SolitaireStarts(_NativeStarts):
    """Exploring starts of one ``Solitaire-v0`` objective: a share ``fraction`` of the starting
    episodes is replaced, drawn from the wrapper's own generator."""

    def __init__(self, venv: VecEnv, what: str, mode: str, fraction: float, seed: int) -> None:
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"fraction must be in [0, 1], got {fraction}")
        super().__init__(venv, what)
        if self.batch.mode != mode:
            raise ValueError(f"{what} need Solitaire-v0's {mode!r} objective, not {self.batch.mode!r}")
        self.fraction = float(fraction)
        self.rng = np.random.default_rng(seed)

    def _picked(self, rows: np.ndarray) -> np.ndarray:
        return rows[self.rng.random(rows.size) < self.fraction]


class FinalRoundStarts(_NativeStarts):
    """Starts ``fraction`` of the episodes of a native Duel-v0 at the learner's final turn,
    and ``scores`` of them at a turn start with random banked scores (:func:`score_start`).

    Args:
        venv: the native vector env (``--vector native``), possibly inside ``VecMonitor``.
        fraction: probability that a starting episode is replaced by a final-round start.
        seed: seed of the wrapper's own generator (which episodes, which scores).
        near: share of those starts with the learner close behind (``final_round_start``).
        warmup: random roll-and-keep steps played into the learner's turn, at most.
        scores: probability that a starting episode is replaced by a random-score start
            (``fraction + scores <= 1``).
        scores_warmup: the ``warmup`` of the random-score starts.
        scores_near: share of the random-score starts with both scores within
            ``ENDGAME_SHARE`` of the target below it.
    """

    def __init__(
        self,
        venv: VecEnv,
        fraction: float,
        seed: int,
        near: float = 0.0,
        warmup: int = 0,
        scores: float = 0.0,
        scores_warmup: int = 0,
        scores_near: float = 0.0,
    ) -> None:
        for name, value in (("fraction", fraction), ("near", near), ("scores", scores), ("scores_near", scores_near)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        if fraction + scores > 1.0:
            raise ValueError(f"final-round and random-score starts share one draw: {fraction} + {scores} > 1")
        super().__init__(venv, "final-round starts")
        if self.batch.mode != "duel" or int(self.batch._ep[K.EP_NPLAYERS]) != 2:
            raise ValueError("final-round starts need a two-seat Duel-v0")
        if fraction:
            final_round_start(self.rules, 0, np.random.default_rng(0))  # refuses rules without one
        self.fraction = float(fraction)
        self.near = float(near)
        self.scores = float(scores)
        self.scores_near = float(scores_near)
        self.endgame_span = max(50, int(self.rules.target * ENDGAME_SHARE) // 50 * 50)
        for name, steps in (("warmup", warmup), ("scores_warmup", scores_warmup)):
            if steps < 0:
                raise ValueError(f"{name} must be >= 0, got {steps}")
        self.warmup = int(warmup)
        self.scores_warmup = int(scores_warmup)
        self.rng = np.random.default_rng(seed)

    def _starts(self, rows: np.ndarray) -> dict[int, State]:
        draw = self.rng.random(rows.size)
        pick = rows[draw < self.fraction]
        seats = self.batch.seat
        starts: dict[int, State] = {}
        if pick.size:
            near = self.rng.random(pick.size) < self.near
            for i, n in zip(pick, near, strict=True):
                starts[int(i)] = final_round_start(self.rules, int(seats[i]), self.rng, near=bool(n), warmup=self.warmup)
        if self.scores:
            for i in rows[(draw >= self.fraction) & (draw < self.fraction + self.scores)]:
                span = self.endgame_span if self.rng.random() < self.scores_near else 0
                starts[int(i)] = score_start(
                    self.rules, int(seats[i]), self.rng, warmup=self.scores_warmup, near=span
                )
        return starts


class EntryStarts(_SolitaireStarts):
    """Starts ``fraction`` of the episodes of a native ``Solitaire-v0`` (objective ``turn``)
    with the player not yet on the board (see the module).

    The episode's first roll is kept; only the ``entered`` flag of the row is cleared, so the
    learner must reach the rules' entry threshold before banking, and the episode's return is
    what it banks. The exact evaluations of the turn objective (``policy_value``) stay those of
    a player on the board.

    Args:
        venv: the native vector env (``--vector native``), possibly inside ``VecMonitor``.
        fraction: probability that a starting episode is one not yet on the board.
        seed: seed of the wrapper's own generator (which episodes).
    """

    def __init__(self, venv: VecEnv, fraction: float, seed: int) -> None:
        super().__init__(venv, "entry starts", "turn", fraction, seed)
        if not self.rules.entry_threshold:
            raise ValueError(f"rules {self.rules.name!r} have no entry threshold: every turn is on the board")

    def _starts(self, rows: np.ndarray) -> dict[int, State]:
        pick = self._picked(rows)
        return {int(i): State(**self.batch.fields(int(i)))._replace(entered=(False,)) for i in pick}


class KeepStarts(_SolitaireStarts):
    """Starts ``fraction`` of the episodes of a native ``Solitaire-v0`` (objective ``turn``)
    after a uniformly random legal move at the turn's first keep (see the module).

    An episode starts at the keep decision of its first roll; for the rows drawn, a legal move
    of that position (a keep, or a reroll of all the dice where the rules allow one) is played
    by the reference rules and the episode goes on from there (the engine rolls on to the next
    decision). Episodes that begin elsewhere (a first roll that scores nothing ends the turn at
    once) are left as they are. Stacks with :class:`EntryStarts` (apply that one first).

    Args:
        venv: the native vector env (``--vector native``), possibly inside other wrappers.
        fraction: probability that a starting episode has its first keep made at random.
        seed: seed of the wrapper's own generator (which episodes, which moves).
    """

    def __init__(self, venv: VecEnv, fraction: float, seed: int) -> None:
        super().__init__(venv, "keep starts", "turn", fraction, seed)

    def _starts(self, rows: np.ndarray) -> dict[int, State]:
        pick = self._picked(rows)
        starts: dict[int, State] = {}
        for i in pick:
            s = State(**self.batch.fields(int(i)))
            if s.phase != Phase.KEEP or s.turn_total or not s.fresh:
                continue
            moves = legal_moves(self.rules, s)
            t = apply(self.rules, s, moves[int(self.rng.integers(len(moves)))])
            if t.phase != Phase.OVER and t.player == s.player:
                starts[int(i)] = t
        return starts


class RaceStarts(_SolitaireStarts):
    """Starts ``fraction`` of the races of a native ``Solitaire-v0`` (objective ``race``) from a
    random banked score (see the module).

    A race starts at its first roll's keep with 0 banked; for the rows drawn the banked score is
    replaced by :func:`race_score` (and the player marked on the board unless it is 0), so the
    roll on the table is kept from there. The return is minus the turns taken from that start.
    Evaluations run whole races from 0.

    Args:
        venv: the native vector env (``--vector native``), possibly inside other wrappers.
        fraction: probability that a starting race starts from a random banked score.
        seed: seed of the wrapper's own generator (which races, which scores).
        near: share of those starts drawn within ``ENDGAME_SHARE`` of the target below it
            (the landing, where even optimal play can take dozens of turns from a bad score).
    """

    def __init__(self, venv: VecEnv, fraction: float, seed: int, near: float = 0.0) -> None:
        if not 0.0 <= near <= 1.0:
            raise ValueError(f"near must be in [0, 1], got {near}")
        super().__init__(venv, "race starts", "race", fraction, seed)
        if not self.rules.target:
            raise ValueError(f"rules {self.rules.name!r} have no target to race to")
        self.near = float(near)
        self.endgame_span = max(50, int(self.rules.target * ENDGAME_SHARE) // 50 * 50)

    def _starts(self, rows: np.ndarray) -> dict[int, State]:
        pick = self._picked(rows)
        starts: dict[int, State] = {}
        for i in pick:
            s = State(**self.batch.fields(int(i)))
            if s.phase != Phase.KEEP or s.turn_total or s.scores[0]:
                continue
            span = self.endgame_span if self.rng.random() < self.near else 0
            score = race_score(self.rules, self.rng, near=span)
            entered = bool(score > 0 or not self.rules.entry_threshold)
            starts[int(i)] = s._replace(scores=(score,), entered=(entered,))
        return starts
