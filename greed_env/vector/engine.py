"""Batches of games and of episodes as arrays, driven by the numba kernels.

* :class:`BatchGame`: ``N`` independent games at the level of :mod:`greed_env.rules.game`
  (chance and decisions applied explicitly), for tests and tools;
* :class:`EpisodeBatch`: ``N`` Solitaire or Duel episodes stepped in lockstep, the engine of
  the Gymnasium and SB3 vector environments. Dice codes and uniforms come from a
  ``numpy.random.Generator`` owned by the batch, seeded by :meth:`EpisodeBatch.reset`.

>>> import numpy as np
>>> g = BatchGame("ten_thousand", num_games=3, num_players=2)
>>> g.new_games(first_player=0)
>>> g.apply_rolls(np.array([0, 0, 0]))          # code 0: six 1s
>>> g.roll(0), g.masks().sum(axis=1).tolist()
((1, 1, 1, 1, 1, 1), [6, 6, 6])
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from greed_env.abilities import abilities_of
from greed_env.bots.base import Bot
from greed_env.bots.loader import as_bot
from greed_env.rules import Phase, Rules, State
from greed_env.spaces.observation import OBS_DIM
from greed_env.vector import kernels as K
from greed_env.vector.layout import decode_row, encode_state
from greed_env.vector.pool import RowPool, default_threads
from greed_env.vector.tables import VectorTables, VectorUnsupportedError, vector_tables
from greed_env.vector.threads import JOB_RESUME, JOB_STEP

__all__ = ["BatchGame", "EpisodeBatch", "opponent_params"]

PARALLEL_MIN_ENVS = 1024
"""The smallest batch that a ``parallel`` batch steps on several threads (smaller ones run on
the calling thread: a worker's wake-up would cost more than its share)."""

OUTPUT_SLOTS = 3
"""Observation and mask arrays an :class:`EpisodeBatch` writes its steps into in turn. A step
writes into one that nothing outside the batch references any more, so the arrays a caller
was given (and still holds) never change; when the caller holds every one, a new array
replaces one of them."""

LISTED_ACTIONS = 32
"""Legal actions of a row that a step lists for the random policy (a row with more is walked
again when one is drawn)."""

_UNSHARED = 2
"""``sys.getrefcount`` of an output array that only the batch's slot tuple references (the
tuple, and the call's own argument)."""

_KEEP_STYLES = {
    "max-score": K.KEEP_MAX_SCORE,
    "keep-most": K.KEEP_MOST,
    "keep-fewest": K.KEEP_FEWEST,
}


_NO_OPTIMAL = (
    np.zeros((1, 3), dtype=np.int64),
    np.zeros(1, dtype=np.float32),
    np.zeros(1, dtype=np.int8),
)
"""Placeholder optimal-bot arrays of batches with another opponent (the kernels' signature)."""


def _as_rows(rows: np.ndarray | None, n: int) -> np.ndarray:
    if rows is None:
        return np.ones(n, dtype=np.bool_)
    out = np.asarray(rows, dtype=np.bool_)
    if out.shape != (n,):
        raise ValueError(f"rows must be a bool array of shape ({n},), got {out.shape}")
    return out


class BatchGame:
    """``num_games`` games of ``num_players`` seats under one rules configuration.

    Row ``i`` mirrors a :class:`greed_env.rules.State`; :meth:`fields` lists its fields in
    the reference's terms. Actions are catalog ids; rolls are codes (see
    :mod:`greed_env.vector.tables`).

    Raises:
        VectorUnsupportedError: rules the vector engine does not model.
    """

    def __init__(self, rules: Rules | str | None, num_games: int, num_players: int = 2) -> None:
        self.tables: VectorTables = vector_tables(rules)
        self.rules = self.tables.rules
        if not 1 <= num_players <= K.MAX_PLAYERS:
            raise ValueError(f"num_players must be 1..{K.MAX_PLAYERS}, got {num_players}")
        self.num_games = int(num_games)
        self.num_players = num_players
        self.S = np.zeros((self.num_games, K.N_COLS), dtype=np.int64)
        self.new_games()

    @property
    def _tab(self) -> np.ndarray:
        return self.tables.tab

    def new_games(self, first_player: int | None = None, rows: np.ndarray | None = None) -> None:
        """``new_game(rules, num_players, first_player)`` in every flagged row."""
        fp = -1 if first_player is None else int(first_player)
        K.batch_new_games(self.S, _as_rows(rows, self.num_games), self.num_players, fp, self._tab)

    @property
    def phase(self) -> np.ndarray:
        return self.S[:, K.C_PHASE]

    def chance_rows(self) -> np.ndarray:
        """Rows at a chance node (the who-starts roll or a roll of the dice)."""
        ph = self.phase
        return (ph == Phase.ROLL) | (ph == Phase.ORDER_ROLL)

    def decision_rows(self) -> np.ndarray:
        """Rows waiting for a decision."""
        ph = self.phase
        return (
            (ph == Phase.KEEP)
            | (ph == Phase.CONTINUE)
            | (ph == Phase.SPLIT)
            | (ph == Phase.ORDER_CHOICE)
        )

    def apply_rolls(self, codes: np.ndarray, rows: np.ndarray | None = None) -> None:
        """Roll every flagged row (each must be at a chance node) with ``codes[i]``."""
        rows = _as_rows(rows, self.num_games)
        if np.any(rows & ~self.chance_rows()):
            raise ValueError("apply_rolls: a flagged row is not at a chance node")
        waiting = rows.copy()
        codes = np.asarray(codes, dtype=np.int64)
        while K.batch_apply_rolls(self.S, waiting, codes, self._tab):
            self.tables.grow()

    def apply_actions(self, actions: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Play ``actions[i]`` in every flagged row; returns which were illegal (forfeited)."""
        rows = _as_rows(rows, self.num_games)
        if np.any(rows & ~self.decision_rows()):
            raise ValueError("apply_actions: a flagged row is not at a decision")
        illegal = np.zeros(self.num_games, dtype=np.bool_)
        K.batch_apply_actions(self.S, rows, np.asarray(actions, dtype=np.int64), illegal, self._tab)
        return illegal

    def masks(self) -> np.ndarray:
        """``(N, n_actions)`` int8 legal masks (zeros at chance and terminal rows)."""
        out = np.zeros((self.num_games, self.tables.n_actions), dtype=np.int8)
        K.batch_masks(self.S, out, self._tab)
        return out

    def observations(self, seats: np.ndarray | None = None) -> np.ndarray:
        """``(N, OBS_DIM)`` float32 observations from ``seats`` (default: the player to act)."""
        seats = self.S[:, K.C_PLAYER] if seats is None else np.asarray(seats, dtype=np.int64)
        out = np.zeros((self.num_games, OBS_DIM), dtype=np.float32)
        K.batch_observations(self.S, seats, self._tab, out)
        return out

    def roll(self, i: int) -> tuple[int, ...]:
        """The dice showing in row ``i`` (empty outside the KEEP phase)."""
        r = int(self.S[i, K.C_ROLL])
        return () if r < 0 else self.tables.roll_of(r)

    def load(self, i: int, state: State) -> None:
        """Set row ``i`` to a reference state (the inverse of :meth:`fields`; the piggyback
        offer is not modelled). Positions the game may never reach are loaded as given.

        Outside a turn with nothing working, the row's dice state (never looked up there) is
        0, where play may have left another one holding the same empty carry-over."""
        load_row(self.S, i, state, self.tables)

    def fields(self, i: int) -> dict[str, Any]:
        """Row ``i`` as the reference :class:`~greed_env.rules.State` fields it models
        (every field but ``piggy``, ``taken_over``, ``shares`` and ``event``).

        ``final_left`` is in the reference's order (the owed seats after the player to act).
        """
        return row_fields(self.S, i, self.tables)


def row_fields(S: np.ndarray, i: int, tables: VectorTables) -> dict[str, Any]:
    """The reference-state fields of row ``i`` of a game array (see :meth:`BatchGame.fields`)."""
    return decode_row(S[i], tables.roll_of, lambda d: tables.dice_states[d][1], tables.rules.name)


def load_row(S: np.ndarray, i: int, state: State, tables: VectorTables) -> None:
    """Write a reference state into row ``i`` of a game array (see :meth:`BatchGame.load`).

    Raises:
        ValueError: more seats than the engine holds, or a piggyback offer.
    """
    in_turn = state.phase in (Phase.START, Phase.ROLL, Phase.KEEP, Phase.CONTINUE)
    dice_state = (
        tables.state_id(state.dice, state.carry) if in_turn or not state.carry.is_empty() else 0
    )
    roll_id = tables.roll_id(state.roll) if state.roll else -1
    S[i] = encode_state(state, roll_id, dice_state)


def opponent_params(spec: Bot | str | None, rules: Rules) -> tuple[int, int, int, int]:
    """The kernel form ``(kind, bank_at, keep_style, min_dice)`` of an opponent bot.

    ``spec`` is resolved like the Duel environment's ``opponent`` argument; the vector engine
    plays the bots that declare a native play (:class:`~greed_env.abilities.NativePlay`): the
    random bot, the threshold heuristic (any parameters) and the optimal duel bot of these rules
    (two seats; rules of :func:`greed_env.vector.optimal.check_optimal_supported`).

    Raises:
        VectorUnsupportedError: any other bot.
    """
    bot = as_bot(spec, rules)
    native = abilities_of(bot).native
    kind = native.kind if native is not None else ""
    if native is not None and kind == "optimal" and native.optimal.objective == "duel":
        if not native.is_optimal_duel(rules):
            solved = native.optimal.rules
            raise VectorUnsupportedError(
                f"the optimal duel bot was solved for rules {solved.name!r} "
                f"({solved.fingerprint}), not these ({rules.fingerprint})"
            )
        return K.OPP_OPTIMAL, 0, 0, 0
    if native is not None and kind == "random":
        return K.OPP_RANDOM, 0, 0, 0
    if native is not None and kind == "threshold":
        if native.keep not in _KEEP_STYLES:
            raise VectorUnsupportedError(f"threshold keep style {native.keep!r} is unknown")
        return K.OPP_THRESHOLD, int(native.bank_at), _KEEP_STYLES[native.keep], int(native.min_dice)
    raise VectorUnsupportedError(
        "the vector engine plays RandomBot, ThresholdBot and the optimal duel bot in numba (the bots "
        f"that declare a native play), not {bot!r}"
    )


class EpisodeBatch:
    """``num_envs`` Solitaire or Duel episodes stepped together (the vector envs' engine).

    Args:
        rules: preset name or :class:`~greed_env.rules.Rules` (see
            :func:`~greed_env.vector.tables.check_vector_supported`).
        num_envs: episodes in the batch.
        mode: ``"turn"`` / ``"race"`` (Solitaire objectives) or ``"duel"``.
        num_players: seats of a duel (1 for Solitaire).
        seat: the learner's fixed seat in a duel, or None to draw it per episode.
        opponent: the duel opponent (see :func:`opponent_params`).
        max_steps, max_turns: Solitaire truncation limits (``turn`` / ``race``).
        reward_scale: points-to-reward factor of ``turn``.
        illegal_reward: reward of an illegal action (which forfeits the turn).
        same_step: autoreset inside the step that ends an episode (else on the next step).
        buffer_size: ring-buffer slots of dice codes (and uniforms) per episode.
        parallel: step on several threads (:mod:`greed_env.vector.pool`): ``True`` for
            :func:`~greed_env.vector.pool.default_threads`, or a number of threads. Batches
            under :data:`PARALLEL_MIN_ENVS` run on the calling thread. The calling thread
            takes whatever rows the workers have not claimed, so a busy core slows a step
            down to about one thread's speed, never below it.

    After :meth:`step`, ``obs``, ``mask``, ``rewards``, ``terminated``, ``truncated``,
    ``illegal``, ``done`` and ``final_obs`` (rows of the episodes that ended) hold the
    results. ``obs`` and ``mask`` are written by the kernels into one of
    :data:`OUTPUT_SLOTS` arrays that nothing else references when the step starts, so an
    array a caller keeps is never written again (the vector envs return them without a
    copy); the others are overwritten by the next step.
    """

    def __init__(
        self,
        rules: Rules | str | None,
        num_envs: int,
        mode: str = "turn",
        num_players: int = 1,
        seat: int | None = None,
        opponent: Bot | str | None = "threshold",
        max_steps: int = 1000,
        max_turns: int = 200,
        reward_scale: float = 1e-3,
        illegal_reward: float = -1.0,
        same_step: bool = True,
        buffer_size: int = 64,
        parallel: bool | int = False,
    ) -> None:
        modes = {"turn": K.MODE_TURN, "race": K.MODE_RACE, "duel": K.MODE_DUEL}
        if mode not in modes:
            raise ValueError(f"mode must be one of {sorted(modes)}, got {mode!r}")
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if buffer_size < 8:
            raise ValueError("buffer_size must be at least 8")
        self.tables = vector_tables(rules)
        self.rules = self.tables.rules
        self.num_envs = num_envs
        self.mode = mode
        n_players = num_players if mode == "duel" else 1
        if mode == "duel" and not 2 <= n_players <= K.MAX_PLAYERS:
            raise ValueError(f"a duel needs 2..{K.MAX_PLAYERS} players, got {num_players}")
        ep = np.zeros(K.EP_SIZE, dtype=np.int64)
        ep[K.EP_MODE] = modes[mode]
        ep[K.EP_NPLAYERS] = n_players
        ep[K.EP_FIXED_SEAT] = -1 if seat is None else int(seat)
        ep[K.EP_MAX_STEPS] = max_steps
        ep[K.EP_MAX_TURNS] = max_turns
        ep[K.EP_AUTORESET] = int(same_step)
        self.uses_uniforms = False
        self._opt = _NO_OPTIMAL
        if mode == "duel":
            bot = as_bot(opponent, self.rules)
            kind, bank_at, style, min_dice = opponent_params(bot, self.rules)
            if kind == K.OPP_OPTIMAL:
                if n_players != 2:
                    raise VectorUnsupportedError("the optimal duel opponent plays two seats only")
                from greed_env.vector.optimal import optimal_arrays

                solved = abilities_of(bot).native.optimal  # type: ignore[union-attr]
                opt = optimal_arrays(self.rules, solved.table)
                self._opt = (opt.index, opt.vals, opt.flags)
                ep[K.EP_OPT_UNIT], ep[K.EP_OPT_TARGET], ep[K.EP_OPT_DEFICIT] = opt.params()
            ep[K.EP_OPPONENT] = kind
            ep[K.EP_BANK_AT] = bank_at
            ep[K.EP_KEEP_STYLE] = style
            ep[K.EP_MIN_DICE] = min_dice
            self.uses_uniforms = kind == K.OPP_RANDOM or seat is None
        self._ep = ep
        self._fp = np.array([reward_scale, illegal_reward], dtype=np.float64)
        if isinstance(parallel, bool) or parallel is None:
            threads = default_threads() if parallel else 1
        else:
            threads = int(parallel)
            if threads < 1:
                raise ValueError(
                    f"parallel must be a bool or a positive number of threads, got {parallel!r}"
                )
        self.threads = threads if num_envs >= PARALLEL_MIN_ENVS else 1
        self.parallel = self.threads > 1
        self._pool = RowPool(num_envs, self.threads)
        self._acts = np.zeros(num_envs, dtype=np.int64)
        self._unif01 = np.zeros(num_envs, dtype=np.float64)
        self._picked = np.zeros(num_envs, dtype=np.int64)
        n = num_envs
        self.S = np.zeros((n, K.N_COLS), dtype=np.int64)
        self.E = np.zeros((n, K.E_COLS), dtype=np.int64)
        self._codes = np.zeros((n, buffer_size), dtype=np.int64)
        self._unif = np.zeros((n, buffer_size if self.uses_uniforms else 1), dtype=np.float64)
        self._code_high = 6**self.tables.num_dice
        self._low_water = buffer_size // 2
        self._obs_slots = tuple(
            np.zeros((n, OBS_DIM), dtype=np.float32) for _ in range(OUTPUT_SLOTS)
        )
        self._mask_slots = tuple(
            np.zeros((n, self.tables.n_actions), dtype=np.int8) for _ in range(OUTPUT_SLOTS)
        )
        self._slot = np.zeros(1, dtype=np.int64)
        self.final_obs = np.zeros((n, OBS_DIM), dtype=np.float32)
        listed = min(LISTED_ACTIONS, self.tables.n_actions)
        self._legal = np.zeros((n, 1 + listed), dtype=np.int16)
        self.rewards = np.zeros(n, dtype=np.float64)
        self._pending = np.zeros(n, dtype=np.float64)
        self._rng = np.random.default_rng()
        self.draw_log: list[tuple[str, np.ndarray, np.ndarray]] | None = None
        """When a list, every refill appends ``(kind, per-row counts, draws)`` (tests)."""

    # ------------------------------------------------------------------------------------
    @property
    def obs(self) -> np.ndarray:
        """``(num_envs, OBS_DIM)`` float32 observations of the latest step or reset."""
        return self._obs_slots[int(self._slot[0])]

    @property
    def mask(self) -> np.ndarray:
        """``(num_envs, n_actions)`` int8 legal masks of the latest step or reset."""
        return self._mask_slots[int(self._slot[0])]

    def _next_slot(self, keep_rows: bool) -> None:
        """Point the kernels' outputs at another slot that nothing outside the batch
        references (new arrays in the next slot if the caller holds them all); with
        ``keep_rows`` the current observations and masks are copied there first (for a call
        that publishes only some rows)."""
        current = int(self._slot[0])
        for step in range(1, OUTPUT_SLOTS):
            k = (current + step) % OUTPUT_SLOTS
            if (
                sys.getrefcount(self._obs_slots[k]) <= _UNSHARED
                and sys.getrefcount(self._mask_slots[k]) <= _UNSHARED
            ):
                break
        else:
            k = (current + 1) % OUTPUT_SLOTS
            self._replace_slot(k)
        if keep_rows:
            np.copyto(self._obs_slots[k], self._obs_slots[current])
            np.copyto(self._mask_slots[k], self._mask_slots[current])
        self._slot[0] = k

    def _replace_slot(self, k: int) -> None:
        """New arrays in slot ``k`` (the thread pool binds the new tuples on its next job)."""
        obs, mask = list(self._obs_slots), list(self._mask_slots)
        obs[k] = np.empty_like(obs[k])
        mask[k] = np.empty_like(mask[k])
        self._obs_slots, self._mask_slots = tuple(obs), tuple(mask)

    @property
    def seat(self) -> np.ndarray:
        """The learner's seat in each episode."""
        return self.E[:, K.E_SEAT]

    @property
    def terminated(self) -> np.ndarray:
        return self.E[:, K.E_TERMINATED].astype(np.bool_)

    @property
    def truncated(self) -> np.ndarray:
        return self.E[:, K.E_TRUNCATED].astype(np.bool_)

    @property
    def done(self) -> np.ndarray:
        return self.E[:, K.E_DONE].astype(np.bool_)

    @property
    def illegal(self) -> np.ndarray:
        return self.E[:, K.E_ILLEGAL].astype(np.bool_)

    def flags(self) -> tuple[np.ndarray, int]:
        """The latest step's ``terminated``, ``truncated``, ``done`` and ``illegal`` flags as
        the rows of one new ``(4, num_envs)`` bool array (each row contiguous), read in one
        pass, and the number of rows done."""
        out = np.empty((4, self.num_envs), dtype=np.bool_)
        return out, int(K.episode_flags(self.E, out))

    def _refill(self, force: bool) -> None:
        size = self._codes.shape[1]
        total, low = K.free_slots(self.E, K.E_CODE_READ, K.E_CODE_WRITE, size)
        if total and (force or low < self._low_water):
            self._append("codes", self._codes, K.E_CODE_READ, K.E_CODE_WRITE, total)
        if self.uses_uniforms:
            size = self._unif.shape[1]
            total, low = K.free_slots(self.E, K.E_U_READ, K.E_U_WRITE, size)
            if total and (force or low < self._low_water):
                self._append("uniforms", self._unif, K.E_U_READ, K.E_U_WRITE, total)

    def _append(
        self, kind: str, buf: np.ndarray, read_col: int, write_col: int, total: int
    ) -> None:
        if kind == "codes":
            draws = self._rng.integers(0, self._code_high, size=total, dtype=np.int64)
        else:
            draws = self._rng.random(total)
        if self.draw_log is not None:
            counts = buf.shape[1] - (self.E[:, write_col] - self.E[:, read_col])
            self.draw_log.append((kind, counts.copy(), draws.copy()))
        K.scatter_draws(self.E, read_col, write_col, buf, draws)

    @property
    def _tab(self) -> np.ndarray:
        return self.tables.tab

    def _drain(self, starved: int) -> None:
        """Resume the games that stopped for dice codes, uniforms or (Trippn) table rows."""
        while starved:
            self.tables.grow()
            self._refill(force=True)
            starved = self._resume()

    def _resume(self) -> int:
        """Continue every game with a pending stage; returns how many starved again."""
        if not self.parallel:
            return K.resume_range(0, self.num_envs, self.S, self.E, *self._tail())
        return self._pool.run(JOB_RESUME, self._job_args())

    def _job_args(self) -> tuple[Any, ...]:
        """The thread pool's kernel arguments (``threads.drive`` after the job)."""
        return (
            self.S,
            self.E,
            self._acts,
            *self._common(),
            self._obs_slots,
            self._mask_slots,
            self.final_obs,
            self._legal,
            self._slot,
            self._unif01,
            self._picked,
        )

    def _common(self) -> tuple[Any, ...]:
        return (
            self._tab,
            self._ep,
            self._fp,
            *self._opt,
            self._codes,
            self._unif,
            self.rewards,
            self._pending,
        )

    def _tail(self) -> tuple[Any, ...]:
        """The row kernels' arguments after the actions (``step_range``, ``resume_range``),
        writing into the current output slot."""
        return (*self._common(), self.obs, self.mask, self.final_obs, self._legal)

    # ------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, rows: np.ndarray | None = None) -> None:
        """Start new episodes in the flagged rows (all by default).

        With ``seed`` the batch's generator is re-seeded and the draw buffers emptied, so the
        same seed gives the same episodes; without it the random stream continues.
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            for col in (K.E_CODE_READ, K.E_CODE_WRITE, K.E_U_READ, K.E_U_WRITE):
                self.E[:, col] = 0
        flagged = _as_rows(rows, self.num_envs)
        K.start_rows(self.E, flagged)
        self.rewards[:] = 0.0
        self._next_slot(keep_rows=not flagged.all())
        self._refill(force=False)
        self._drain(self._resume())

    def step(self, actions: np.ndarray) -> None:
        """Apply one action per episode, then roll and play opponents up to the next decision.

        Illegal actions forfeit the turn with ``illegal_reward`` (check them beforehand for
        ``illegal_action='raise'``). Results are left in the attributes (see the class doc).
        """
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {acts.shape}")
        acts = acts.astype(np.int64, copy=False)
        self._next_slot(keep_rows=False)  # every row is published by the step
        self._refill(force=False)
        if not self.parallel:
            starved = K.step_range(0, self.num_envs, self.S, self.E, acts, *self._tail())
        else:
            self._acts[:] = acts
            starved = self._pool.run(JOB_STEP, self._job_args())
        self._drain(starved)

    def restart_from(self, starts: dict[int, State]) -> None:
        """Continue the episodes of the given rows from the given positions instead: each
        row's game is set to its reference state (the episode's learner seat is kept) and
        played on (rolls, opponents) to the learner's next decision, then ``obs`` and ``mask``
        are refreshed. A game that ends before the learner decides is replaced by a new game
        from the start, as at any reset.

        For exploring starts (``greed_env.train.curriculum``): positions a game reaches
        rarely, such as the final round, can be trained on directly.

        Raises:
            ValueError: a position for another number of seats, or one already over.
        """
        for i, state in starts.items():
            if state.num_players != int(self._ep[K.EP_NPLAYERS]) or state.phase == Phase.OVER:
                raise ValueError(
                    f"row {i}: cannot restart from {state.phase!r} with {state.num_players} seats"
                )
            load_row(self.S, i, state, self.tables)
            self.E[i, K.E_STAGE] = K.STAGE_RESET_ADVANCE
        self._next_slot(keep_rows=True)
        self._refill(force=False)
        self._drain(self._resume())

    def optimal_actions(self) -> np.ndarray:
        """The optimal duel bot's action in every row, from the acting seat's view (-1 where
        nothing is to decide), in a batch whose opponent is ``optimal``.

        Raises:
            ValueError: the batch's opponent is not the optimal duel bot.
        """
        if self._opt is _NO_OPTIMAL:
            raise ValueError("optimal_actions needs a duel batch whose opponent is 'optimal'")
        out = np.zeros(self.num_envs, dtype=np.int64)
        K.batch_optimal_actions(self.S, self._tab, self._ep, *self._opt, out)
        return out

    def threshold_actions(self, bank_at: int, style: int, min_dice: int) -> np.ndarray:
        """``ThresholdBot``'s action in every row from the acting seat's view (-1 where nothing
        is to decide); ``style`` is a kernel keep style (see :func:`opponent_params`)."""
        out = np.zeros(self.num_envs, dtype=np.int64)
        rows = np.ones(self.num_envs, dtype=np.bool_)
        K.batch_threshold_actions(
            self.S, rows, int(bank_at), int(style), int(min_dice), self._tab, out
        )
        return out

    def random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per episode (``RandomBot``'s choice), from ``rng``."""
        out = np.empty(self.num_envs, dtype=np.int64)
        K.pick_listed(self.S, self._tab, self._legal, rng.random(self.num_envs), out)
        return out

    def fields(self, i: int) -> dict[str, Any]:
        """Episode ``i``'s game as reference-state fields (see :meth:`BatchGame.fields`)."""
        return row_fields(self.S, i, self.tables)


def code_stream(log: list[tuple[str, np.ndarray, np.ndarray]], kind: str, row: int) -> list[Any]:
    """Every draw of ``kind`` handed to ``row``, in order, from an :attr:`EpisodeBatch.draw_log`."""
    out: list[Any] = []
    for k, counts, draws in log:
        if k != kind:
            continue
        start = int(counts[:row].sum())
        out.extend(draws[start : start + int(counts[row])].tolist())
    return out
