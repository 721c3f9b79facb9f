"""Game-level batch operations of the vector kernels (the batch engine, tests, tools), and the
ring-buffer refills of the episode arrays.
"""

from __future__ import annotations

from greed_env.vector.game import apply_action, apply_roll, new_game
from greed_env.vector.jit import kernel
from greed_env.vector.layout import (
    E_DONE,
    E_ILLEGAL,
    E_TERMINATED,
    E_TRUNCATED,
    OK,
)
from greed_env.vector.lookup import decode_roll
from greed_env.vector.observe import encode_row, mask_row
from greed_env.vector.policies import optimal_action, threshold_action


@kernel
def batch_optimal_actions(S, tab, ep, oidx, oval, oflag, out):
    """:func:`optimal_action` of every row (-1 where nothing is to decide)."""
    for i in range(S.shape[0]):
        out[i] = optimal_action(S, i, tab, ep, oidx, oval, oflag)


@kernel
def batch_new_games(S, rows, n, first_player, tab):
    """``new_game`` into every row flagged in ``rows``."""
    for i in range(S.shape[0]):
        if rows[i]:
            new_game(S, i, n, first_player, tab)


@kernel
def batch_apply_rolls(S, rows, codes, tab):
    """``apply_roll`` of ``codes[i]`` to every flagged row (each must be at a chance node);
    rows whose option row is missing stay flagged and untouched, the others are unflagged.
    Returns how many stay flagged."""
    missing = 0
    for i in range(S.shape[0]):
        if rows[i]:
            if apply_roll(S, i, codes[i], tab) == OK:
                rows[i] = False
            else:
                missing += 1
    return missing


@kernel
def batch_apply_actions(S, rows, actions, illegal, tab):
    """Play ``actions[i]`` in every flagged row; ``illegal[i]`` says whether it forfeited."""
    for i in range(S.shape[0]):
        if rows[i]:
            illegal[i] = apply_action(S, i, actions[i], tab)


@kernel
def batch_masks(S, mask, tab):
    """Catalog masks of every row."""
    for i in range(S.shape[0]):
        mask_row(S, i, tab, mask)


@kernel
def batch_observations(S, seats, tab, obs):
    """Observations of every row from ``seats[i]``."""
    for i in range(S.shape[0]):
        encode_row(S, i, seats[i], tab, obs, i)


@kernel
def episode_flags(E, out):
    """Every row's terminated, truncated, done and illegal flags into the rows 0-3 of the
    ``(4, n)`` bool array ``out`` (one pass over the episode columns); returns the rows done."""
    done = 0
    for i in range(E.shape[0]):
        out[0, i] = E[i, E_TERMINATED] != 0
        out[1, i] = E[i, E_TRUNCATED] != 0
        out[2, i] = E[i, E_DONE] != 0
        out[3, i] = E[i, E_ILLEGAL] != 0
        done += E[i, E_DONE] != 0
    return done


@kernel
def scatter_draws(E, read_col, write_col, buf, draws):
    """Append ``draws`` to the ring buffers, filling each row up to its capacity in row order."""
    n = buf.shape[0]
    size = buf.shape[1]
    k = 0
    for i in range(n):
        w = E[i, write_col]
        need = size - (w - E[i, read_col])
        for _ in range(need):
            buf[i, w % size] = draws[k]
            w += 1
            k += 1
        E[i, write_col] = w
    return k


@kernel
def free_slots(E, read_col, write_col, size):
    """Total free ring slots and the fewest draws left in any row."""
    total = 0
    low = size
    for i in range(E.shape[0]):
        left = E[i, write_col] - E[i, read_col]
        total += size - left
        low = min(low, left)
    return total, low


@kernel
def batch_decode(codes, k, tab, out):
    """Roll ids of the dice codes ``codes`` thrown with ``k`` dice (tests)."""
    for j in range(codes.shape[0]):
        out[j] = decode_roll(codes[j], k, tab)


@kernel
def batch_threshold_actions(S, rows, bank_at, style, min_dice, tab, out):
    """``threshold_action`` of every flagged row (-1 elsewhere; tests, tools)."""
    for i in range(S.shape[0]):
        out[i] = threshold_action(S, i, tab, bank_at, style, min_dice) if rows[i] else -1
