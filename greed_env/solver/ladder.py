"""A difficulty ladder: the optimal duel policy softened by a temperature.

:class:`LadderBot` values every legal move with the solver's duel table (the mover's
probability of winning, :meth:`~greed_env.solver.OptimalBot.move_values`) and draws a move
with probability proportional to ``exp((value - best) / temperature)``. A temperature of 0
plays the optimal move; the higher it is, the more often it plays moves that lose win
probability, and the weaker it is. Every draw comes from the generator passed to
:meth:`LadderBot.act`, so a game is reproducible from its seed. Decisions the duel table does
not value (taking over a turn, splitting a pot, the roll-off order) are the optimal bot's.

The rungs shipped for a preset (``<preset>/ladder-NN``, NN the measured win rate against
``optimal-duel`` in percent, rounded) are read from ``ladder.json`` in the preset's bot folder
(``agents/<preset>/``, installed as ``greed_env/agents/<preset>/``): each rung names its
temperature and the win rate measured for it (:func:`measure`) with its 95% interval.

:func:`measure` plays seat-balanced games against ``optimal-duel`` and reports two figures:
the share of games won, and the **regret estimate** ``0.5 - mean regret per game``, where a
decision's regret is the expected loss of win probability of the softened choice,
``sum_i p_i (best - value_i)``. With an optimal opponent the regrets along a game add up to
exactly the win probability the bot gives away, so both estimate the same number; the
regret estimate has a far smaller variance (no dice luck in it).

>>> import numpy as np
>>> from greed_env.rules import preset, new_game, apply_roll
>>> r = preset("ten_thousand")
>>> s = apply_roll(r, new_game(r, 2, first_player=0), (1, 1, 5, 2, 3, 4))
>>> bot = LadderBot(r, 0.0)
>>> str(bot.act(r, s, np.random.default_rng(0))) == str(OptimalBot(r, "duel").act(r, s, None))
True
>>> strong = LadderBot(r, 0.001).probabilities(r, s)
>>> weak = LadderBot(r, 1.0).probabilities(r, s)
>>> bool(max(strong.values()) > max(weak.values()))
True
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.abilities import Abilities
from greed_env.files import atomic_write_text
from greed_env.rules.config import Rules, resolve_rules
from greed_env.rules.game import (
    Move,
    Phase,
    State,
    apply,
    apply_roll,
    is_chance,
    is_over,
    new_game,
    returns,
    sample_roll,
)
from greed_env.solver.model import SolverError
from greed_env.solver.optimal_bot import OptimalBot
from greed_env.solver.table import SolverTable

__all__ = [
    "LADDER_FILE",
    "LADDER_FORMAT",
    "LadderBot",
    "LadderError",
    "Measurement",
    "Rung",
    "measure",
    "read_ladder",
    "rung_name",
]

LADDER_FILE = "ladder.json"
LADDER_FORMAT = 1


class LadderError(ValueError):
    """A ladder file that is missing, malformed or made for other rules."""


class LadderBot:
    """Plays a duel move drawn from a softmax of the exact win probabilities (Bot protocol).

    Args:
        rules: the rule set (a preset name or :class:`Rules`); must have a duel table.
        temperature: in win-probability units, >= 0; 0 plays the optimal moves.
        table: a solved duel table (default: :func:`greed_env.solver.load_table`).
        optimal: an :class:`OptimalBot` to share (its table and cache) instead of ``table``.
        name: the bot's name (default ``ladder-T<temperature>``).
    """

    def __init__(
        self,
        rules: Rules | str,
        temperature: float,
        table: SolverTable | None = None,
        optimal: OptimalBot | None = None,
        name: str | None = None,
    ) -> None:
        if not (isinstance(temperature, (int, float)) and math.isfinite(temperature) and temperature >= 0):
            raise SolverError(f"ladder temperature must be a finite number >= 0, got {temperature!r}")
        self.rules = resolve_rules(rules)
        if optimal is None:
            optimal = OptimalBot(self.rules, "duel", table=table)
        elif optimal.objective != "duel" or optimal.rules.fingerprint != self.rules.fingerprint:
            raise SolverError("the ladder needs the optimal duel bot of its own rules")
        self.optimal = optimal
        self.temperature = float(temperature)
        self.name = name or f"ladder-T{self.temperature:g}"
        self.description = f"optimal duel policy softened by temperature {self.temperature:g}"

    def abilities(self) -> Abilities:
        """The rules of its table only, two-player games only (the duel table's win
        probabilities); the distribution it draws its moves from (:meth:`move_probabilities`)."""
        return Abilities(
            rules=self.rules, min_players=2, max_players=2, move_probabilities=self.move_probabilities
        )

    def probabilities(self, rules: Rules, state: State) -> dict[Move, float]:
        """The probability of each legal move in ``state`` (one move gets 1 where the duel
        table gives no values)."""
        moves, probs, _ = self._choice(rules, state)
        return {m: float(p) for m, p in zip(moves, probs, strict=True)}

    def move_probabilities(self, rules: Rules, state: State) -> list[tuple[Move, float]]:
        """:meth:`probabilities` as ``(move, probability)`` pairs, what :meth:`act` draws from.

        Raises:
            SolverError: ``rules`` are not the bot's rules.
        """
        self._check_rules(rules)
        return list(self.probabilities(rules, state).items())

    def _check_rules(self, rules: Rules) -> None:
        if rules.fingerprint != self.rules.fingerprint:
            raise SolverError(f"bot {self.name} plays {self.rules.name} ({self.rules.fingerprint}), not {rules.name}")

    def expected_regret(self, rules: Rules, state: State) -> float:
        """Expected loss of win probability of this bot's choice in ``state`` against the best
        move (0 where the duel table gives no values)."""
        return self._choice(rules, state)[2]

    def _choice(self, rules: Rules, state: State) -> tuple[list[Move], np.ndarray, float]:
        if state.phase in (Phase.START, Phase.SPLIT, Phase.ORDER_CHOICE):
            move = self.optimal.act(rules, state, np.random.default_rng(0))  # draws nothing here
            return [move], np.ones(1), 0.0
        pairs = self.optimal.move_values(rules, state)
        if not pairs:
            raise ValueError("no legal moves: the position is a chance node or the game is over")
        moves = [m for m, _ in pairs]
        values = np.array([v for _, v in pairs], dtype=np.float64)
        best = float(values.max())
        if self.temperature == 0.0 or len(moves) == 1:
            probs = np.zeros(len(moves))
            probs[int(np.argmax(values))] = 1.0
        else:
            weights = np.exp((values - best) / self.temperature)
            probs = weights / weights.sum()
        return moves, probs, float(np.dot(probs, best - values))

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        """A move drawn from :meth:`probabilities` with ``rng`` (no draw when one move is sure).

        Raises:
            SolverError: ``rules`` are not the bot's rules.
        """
        self._check_rules(rules)
        moves, probs, _ = self._choice(rules, state)
        return _draw(moves, probs, rng)

    def act_with_regret(self, rules: Rules, state: State, rng: np.random.Generator) -> tuple[Move, float]:
        """:meth:`act` and :meth:`expected_regret` of ``state`` from one valuation."""
        moves, probs, regret = self._choice(rules, state)
        return _draw(moves, probs, rng), regret

    def __repr__(self) -> str:
        return f"LadderBot({self.rules.name!r}, temperature={self.temperature:g})"


def _draw(moves: list[Move], probs: np.ndarray, rng: np.random.Generator) -> Move:
    if probs.max() >= 1.0:
        return moves[int(np.argmax(probs))]
    return moves[int(rng.choice(len(moves), p=probs))]


# ------------------------------------------------------------------------------------------
# measuring a rung


@dataclass(frozen=True)
class Measurement:
    """Win rate of a ladder bot against ``optimal-duel`` over seat-balanced games.

    Attributes:
        temperature: the bot's temperature.
        games: games played (half with the ladder bot moving first).
        win_rate, win_ci95: share of games won (a split pot counts 1/2) and its 95% half-width.
        regret_estimate, regret_ci95: ``0.5 - mean regret per game`` and its 95% half-width.
        decisions: decisions of the ladder bot.
        seed: the master seed of the games.
    """

    temperature: float
    games: int
    win_rate: float
    win_ci95: float
    regret_estimate: float
    regret_ci95: float
    decisions: int
    seed: int


def _mean_ci(values: np.ndarray) -> tuple[float, float]:
    n = len(values)
    mean = float(values.mean())
    sd = float(values.std(ddof=1)) if n > 1 else 0.0
    return mean, 1.96 * sd / math.sqrt(n) if n > 1 else 0.0


def measure(
    rules: Rules | str,
    temperature: float,
    games: int,
    seed: int,
    optimal: OptimalBot | None = None,
) -> Measurement:
    """Play ``games`` seat-balanced games of a :class:`LadderBot` against ``optimal-duel``.

    Game ``g`` uses ``numpy.random.default_rng([seed, g])`` for its dice and both bots'
    draws; the ladder bot sits in seat ``g % 2``. The games are the same for every
    temperature (common random numbers), so rungs measured with one seed compare closely.

    Raises:
        SolverError: a non-positive or odd number of games, or rules without a duel table.
    """
    if games <= 0 or games % 2:
        raise SolverError(f"games must be a positive even number (seat-balanced), got {games}")
    r = resolve_rules(rules)
    opt = optimal if optimal is not None else OptimalBot(r, "duel")
    bot = LadderBot(r, temperature, optimal=opt)
    outcome = np.zeros(games)
    regret = np.zeros(games)
    decisions = 0
    for g in range(games):
        rng = np.random.default_rng([seed, g])
        seat = g % 2
        state = new_game(r, 2, first_player=0)
        while not is_over(state):
            if is_chance(state):
                state = apply_roll(r, state, sample_roll(r, state, rng))
                continue
            if state.player == seat:
                move, loss = bot.act_with_regret(r, state, rng)
                regret[g] += loss
                decisions += 1
                state = apply(r, state, move)
            else:
                state = apply(r, state, opt.act(r, state, rng))
        outcome[g] = (returns(state)[seat] + 1.0) / 2.0
    win, win_ci = _mean_ci(outcome)
    reg, reg_ci = _mean_ci(regret)
    return Measurement(float(temperature), games, win, win_ci, 0.5 - reg, reg_ci, decisions, seed)


# ------------------------------------------------------------------------------------------
# the shipped rungs


@dataclass(frozen=True)
class Rung:
    """One shipped ladder bot: ``name`` (``ladder-NN``), its temperature and measured strength."""

    name: str
    temperature: float
    win_rate: float
    win_ci95: float
    games: int
    method: str

    def strength(self) -> str:
        """One line for ``greed bots``."""
        return (
            f"{100 * self.win_rate:.1f}% ±{100 * self.win_ci95:.1f} vs optimal-duel "
            f"({self.method}, {self.games:,} seat-balanced games)"
        )


def rung_name(win_rate: float) -> str:
    """``ladder-NN`` for a measured win rate (NN in whole percent)."""
    return f"ladder-{round(100 * win_rate):02d}"


def read_ladder(path: Path, rules: Rules) -> list[Rung]:
    """The rungs of a ``ladder.json``, checked against ``rules``.

    Raises:
        LadderError: unreadable or malformed file, other format, or other rules.
    """
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LadderError(f"ladder file {path}: cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != LADDER_FORMAT:
        raise LadderError(f"ladder file {path}: not a ladder file of format {LADDER_FORMAT}")
    if data.get("rules") != rules.name or data.get("fingerprint") != rules.fingerprint:
        raise LadderError(
            f"ladder file {path}: made for {data.get('rules')!r} ({data.get('fingerprint')}), "
            f"not {rules.name} ({rules.fingerprint}); measure it again"
        )
    try:
        rungs = [
            Rung(str(x["name"]), float(x["temperature"]), float(x["win_rate"]), float(x["win_ci95"]),
                 int(x["games"]), str(x["method"]))
            for x in data["rungs"]
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise LadderError(f"ladder file {path}: malformed rung ({exc})") from None
    if len({x.name for x in rungs}) != len(rungs) or any(x.temperature < 0 for x in rungs):
        raise LadderError(f"ladder file {path}: rung names must be unique and temperatures >= 0")
    return rungs


# ------------------------------------------------------------------------------------------
# calibration

DEFAULT_TARGETS = (0.20, 0.30, 0.40, 0.45, 0.49)
PROBE_TEMPERATURES = (0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1)
BAND = 0.015
"""A rung is accepted when its final measurement is within this of its target."""


def _interpolate(points: list[tuple[float, float]], target: float) -> float:
    """The temperature whose rate is ``target``, interpolated in log-temperature between the
    measured ``(temperature, rate)`` points (rates fall as temperatures rise)."""
    pts = sorted(p for p in points if p[0] > 0)
    for (t0, r0), (t1, r1) in itertools.pairwise(pts):
        if (r0 - target) * (r1 - target) <= 0 and r0 != r1:
            f = (r0 - target) / (r0 - r1)
            return float(math.exp(math.log(t0) + f * (math.log(t1) - math.log(t0))))
    nearest = min(pts, key=lambda p: abs(p[1] - target))
    return nearest[0]


def calibrate(
    rules: Rules | str,
    targets: tuple[float, ...] = DEFAULT_TARGETS,
    probe_games: int = 400,
    games: int = 2000,
    seed: int = 1,
    log: Any = None,
) -> tuple[list[Rung], list[Measurement]]:
    """Temperatures whose regret-estimated win rates against ``optimal-duel`` hit ``targets``.

    Probes :data:`PROBE_TEMPERATURES` with ``probe_games`` games (seed ``seed``), interpolates
    a temperature per target, measures it on ``games`` other games (seed ``seed + 1``) and,
    when that lands more than :data:`BAND` from the target, corrects it once by interpolating
    over every measurement so far and measures again (seed ``seed + 2``). Returns the rungs
    (named by their target, ``ladder-NN``) and every measurement made.
    """
    r = resolve_rules(rules)
    opt = OptimalBot(r, "duel")
    done: list[Measurement] = []

    def run(t: float, n: int, s: int) -> Measurement:
        m = measure(r, t, n, s, optimal=opt)
        done.append(m)
        if log is not None:
            print(f"{r.name}: T={t:.6g} games={n} seed={s}: regret estimate {100 * m.regret_estimate:.2f}% "
                  f"±{100 * m.regret_ci95:.2f}, won {100 * m.win_rate:.1f}% ±{100 * m.win_ci95:.1f}", file=log, flush=True)
        return m

    probes = [run(t, probe_games, seed) for t in PROBE_TEMPERATURES]
    rungs: list[Rung] = []
    for target in targets:
        points = [(m.temperature, m.regret_estimate) for m in probes]
        t = _interpolate(points, target)
        m = run(t, games, seed + 1)
        if abs(m.regret_estimate - target) > BAND:
            points = [(x.temperature, x.regret_estimate) for x in done]
            t = _interpolate(points, target)
            m = run(t, games, seed + 2)
        rungs.append(Rung(rung_name(target), float(f"{t:.4g}"), round(m.regret_estimate, 5),
                          round(m.regret_ci95, 5), games, "regret estimate"))
    return rungs, done


def write_ladder(path: Path, rules: Rules, rungs: list[Rung], measurements: list[Measurement], command: str) -> None:
    """Write ``ladder.json`` (format :data:`LADDER_FORMAT`) atomically."""
    data = {
        "format": LADDER_FORMAT,
        "rules": rules.name,
        "fingerprint": rules.fingerprint,
        "objective": "duel",
        "opponent": "optimal-duel",
        "command": command,
        "rungs": [r.__dict__ for r in rungs],
        "measurements": [m.__dict__ for m in measurements],
    }
    atomic_write_text(path, json.dumps(data, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    """``python -m greed_env.solver.ladder PRESET --out agents/PRESET``: calibrate and write."""
    import argparse
    import shlex
    import sys

    ap = argparse.ArgumentParser(prog="python -m greed_env.solver.ladder", description=main.__doc__)
    ap.add_argument("rules", help="rules preset with a duel table")
    ap.add_argument("--out", type=Path, required=True, help="folder of the preset's bots (ladder.json)")
    ap.add_argument("--targets", type=float, nargs="+", default=list(DEFAULT_TARGETS))
    ap.add_argument("--probe-games", type=int, default=400)
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rules = resolve_rules(args.rules)
    rungs, done = calibrate(rules, tuple(args.targets), args.probe_games, args.games, args.seed, log=sys.stdout)
    command = "python -m greed_env.solver.ladder " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    write_ladder(args.out / LADDER_FILE, rules, rungs, done, command)
    for rung in rungs:
        print(f"{rules.name}/{rung.name}: {rung.strength()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
