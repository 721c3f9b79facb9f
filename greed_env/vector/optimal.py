"""The solver's optimal duel bot as arrays the vector kernels play from.

:class:`~greed_env.solver.optimal_bot.OptimalBot` values each legal move by an in-turn pass of the
solver kernel for the mover's turn context (both scores, or in the final round the score to
beat), recomputed in Python per context. Here that pass is run once for *every* context of a
two-player duel and its results are stored flat, so a numba kernel
(:func:`greed_env.vector.kernels.optimal_action`) picks the same moves without Python:

* ``vals``: per context, the value after a keep ``c[t, dice]`` (float32, turn total ``t`` in
  solver units), then the reroll-all values ``w[t]`` and the value of a voluntary bust;
* ``flags``: per context, 1 where rolling on beats banking at ``(t, dice)`` (int8; ties bank,
  as ``OptimalBot`` takes the first legal move, and ``BANK`` comes before ``ROLL``);
* ``index``: per context, ``(offset into vals/flags, rows, offset of w)``.

Contexts: ``a * T + b`` for the mover's and the opponent's scores ``a, b`` in units below the
target ``T`` (entry is implied by a score above zero: an entry threshold cannot coexist with a
bust penalty in the solver, so scores never fall back to zero); then, for the final round,
``T*T + 2*(x - 1) + entered`` for a deficit of ``x = 1 .. 2T`` units to beat. Deeper deficits
(a final-round score over three times the target) are played as a deficit of ``2T`` with the
turn total shifted by the difference, which is the same problem once banking is out of reach.

Values are float32: two moves whose float64 values differ by less than about 1e-7 may be
ordered differently from ``OptimalBot`` (tested: the chosen move's value matches the best to
that precision). Building ten_thousand's 40,800 contexts takes about 20 CPU-seconds and 440 MB
(364 MB of values, 80 MB of flags); the arrays of the latest rule set are kept per process.

>>> from greed_env.rules import preset
>>> arr = optimal_arrays(preset("ten_thousand", target=1000))
>>> arr.target_units, arr.index.shape  # 20 x 20 scores, then 2 x 40 final-round deficits
(20, (480, 3))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from greed_env.rules import Rules, new_game
from greed_env.vector.tables import VectorUnsupportedError

__all__ = ["OptimalArrays", "check_optimal_supported", "optimal_arrays"]

_MEMO: dict[tuple[str, str], OptimalArrays] = {}


@dataclass(frozen=True, eq=False)
class OptimalArrays:
    """The flat arrays of one rule set's optimal duel policy (see the module docstring)."""

    index: np.ndarray
    vals: np.ndarray
    flags: np.ndarray
    unit: int
    target_units: int
    deficit_max: int
    table_sha: str

    def params(self) -> tuple[int, int, int]:
        """``(unit, target in units, deepest final-round deficit)`` for the episode vector."""
        return self.unit, self.target_units, self.deficit_max


def check_optimal_supported(rules: Rules) -> None:
    """Raise :class:`VectorUnsupportedError` naming what the vector optimal bot cannot play.

    Supported: two-player duels without carry-over (no Progressive, no Trippn), without an
    exact target, roll-offs or a split vote, without a bust penalty (whose streaks would
    multiply the contexts) and without a fixed number of rounds.
    """
    bad = []
    if rules.carry_over or rules.trippn:
        bad.append("carry-over dice")
    if rules.exact_target:
        bad.append("an exact target")
    if rules.tie_rule != "shared":
        bad.append(f"tie_rule={rules.tie_rule!r}")
    if rules.bust_penalty_after and rules.bust_penalty:
        bad.append("a bust penalty")
    if rules.rounds:
        bad.append("a fixed number of rounds (its contexts depend on the turns left too)")
    if bad:
        raise VectorUnsupportedError(
            f"the vector engine's optimal duel opponent does not play {', '.join(bad)} "
            f"(rules {rules.name!r}); use the Python Duel-v0 with opponent='optimal'"
        )


def optimal_arrays(rules: Rules, table: Any = None) -> OptimalArrays:
    """The optimal duel policy of ``rules`` as flat arrays (built once per process and table).

    Args:
        rules: a rule set :func:`check_optimal_supported` accepts.
        table: its solved ``duel`` table (default :func:`greed_env.solver.load_table`).

    Raises:
        VectorUnsupportedError: rules this module cannot play.
    """
    check_optimal_supported(rules)
    if table is None:
        from greed_env.solver import load_table

        table = load_table(rules, "duel")
    sha = str(table.full_meta()["sha256"])
    key = (rules.fingerprint, sha)
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    arr = _build(rules, table, sha)
    _MEMO.clear()  # one rule set at a time: ten_thousand's arrays take 440 MB
    _MEMO[key] = arr
    return arr


def _build(rules: Rules, table: Any, sha: str) -> OptimalArrays:
    """Run the in-turn pass of every context (the reference: ``OptimalBot``'s own functions)."""
    from greed_env.solver.model import needs_full_tables, roll_tables
    from greed_env.solver.objectives import turn_arrays
    from greed_env.solver.optimal_bot import turn_context

    tb = roll_tables(rules, needs_full_tables(rules, "duel"))
    unit = tb.unit
    tu = -(-rules.target // unit)
    deficit_max = 2 * tu if rules.final_round else 0
    width = tb.num_dice + 1
    entry = rules.entry_threshold > 0
    base = new_game(rules, 2, first_player=0)
    index = np.zeros((tu * tu + 2 * deficit_max, 3), dtype=np.int64)
    c_blocks: list[np.ndarray] = []
    w_blocks: list[np.ndarray] = []
    flags: list[np.ndarray] = []
    c_pos = 0
    w_pos = 0

    def add(k: int, state: Any) -> None:
        nonlocal c_pos, w_pos
        ctx = turn_context(table, rules, state)
        arr = turn_arrays(rules, tb, ctx.t_cap, ctx.bank_val, ctx.bank_ok, ctx.x, ctx.tail)
        c, r = arr["c"], arr["r"]
        rows = c.shape[0]
        roll = (r > ctx.bank_val[:, None]) | ~ctx.bank_ok[:, None]
        c_blocks.append(c.astype(np.float32).ravel())
        flags.append(roll.astype(np.int8).ravel())
        w_blocks.append(np.concatenate([arr["w"][:rows], [ctx.x]]).astype(np.float32))
        index[k] = (c_pos, rows, w_pos)
        c_pos += rows * width
        w_pos += rows + 1

    for a in range(tu):
        for b in range(tu):
            s = base._replace(
                scores=(a * unit, b * unit),
                entered=(a > 0 or not entry, b > 0 or not entry),
            )
            add(a * tu + b, s)
    for x in range(1, deficit_max + 1):
        for ent in (0, 1):
            a = unit if ent and entry else 0
            s = base._replace(
                scores=(a, a + x * unit),
                entered=(bool(ent) or not entry, True),
                endgame=True,
                final_left=(0,),
            )
            add(tu * tu + 2 * (x - 1) + ent, s)
    index[:, 2] += c_pos
    return OptimalArrays(
        index=index,
        vals=np.concatenate(c_blocks + w_blocks),
        flags=np.concatenate(flags),
        unit=unit,
        target_units=tu,
        deficit_max=deficit_max,
        table_sha=sha,
    )
