"""Table lookups of the vector kernels: dice states, option rows, option records, roll decoding.

Table positions are computed signed and cast to ``numpy.uint64`` where they index (they are
never negative): numba checks every signed index for a negative (wraparound) value.

All dice knowledge comes from the flat int64 table ``tab`` built by
:mod:`greed_env.vector.tables` (layout: the ``T_*`` header slots of
:mod:`greed_env.vector.layout`): the kernels look up keep options, never score dice.
"""

from __future__ import annotations

import numpy as np

from greed_env.vector.jit import kernel
from greed_env.vector.layout import (
    C_DICE,
    C_DSTATE,
    C_FRESH,
    C_ROLL,
    CFG_CARRY,
    CFG_NUM_DICE,
    OPT_FIELDS,
    T_CAPREQ,
    T_NREQ,
    T_OFF_DSDICE,
    T_OFF_FOUR,
    T_OFF_MC,
    T_OFF_OPT,
    T_OFF_OSTART,
    T_OFF_POW6,
    T_OFF_REQ,
    T_OFF_RINDEX,
    T_OFF_RSTART,
    T_OFF_SBASE,
)


@kernel
def _fresh_index(S, i, tab):
    if S[i, C_FRESH] != 0 and S[i, C_DICE] == tab[CFG_NUM_DICE]:
        return 1
    return 0


@kernel
def row_dice_state(S, i, tab):
    return S[i, C_DSTATE] if tab[CFG_CARRY] != 0 else _fresh_index(S, i, tab)


@kernel
def row_of(tab, d, r):
    """The option row of roll ``r`` in dice state ``d`` (-1: not built)."""
    base = tab[np.uint64(tab[T_OFF_SBASE] + d)]
    if base < 0:
        return -1
    if tab[CFG_CARRY] != 0:
        r -= tab[np.uint64(tab[T_OFF_RSTART] + tab[np.uint64(tab[T_OFF_DSDICE] + d)])]
    return tab[np.uint64(tab[T_OFF_RINDEX] + base + r)]


@kernel
def table_row(S, i, tab):
    """The option row of the roll showing in row ``i`` (its dice state and roll id)."""
    return row_of(tab, row_dice_state(S, i, tab), S[i, C_ROLL])


@kernel
def ask_for_row(tab, d, r):
    """Ask the caller to build row (``d``, ``r``); a request lost to a full list or to a race
    between threads is asked again when the game resumes."""
    k = tab[T_NREQ]
    if k < tab[T_CAPREQ]:
        tab[tab[T_OFF_REQ] + 2 * k] = d
        tab[tab[T_OFF_REQ] + 2 * k + 1] = r
        tab[T_NREQ] = k + 1


@kernel
def n_options(tab, row):
    ost = tab[T_OFF_OSTART]
    return tab[np.uint64(ost + row + 1)] - tab[np.uint64(ost + row)]


@kernel
def option_records(tab, row):
    """Position in ``tab`` of the first option record of table row ``row``."""
    return tab[T_OFF_OPT] + tab[np.uint64(tab[T_OFF_OSTART] + row)] * OPT_FIELDS


@kernel
def option_field(tab, rec, j, field):
    """``field`` of option ``j`` of the row whose records start at ``rec``."""
    return tab[np.uint64(rec + j * OPT_FIELDS + field)]


@kernel
def decode_roll(code, k, tab):
    """Roll id of dice code ``code`` thrown with ``k`` dice: the base-6 digits of
    ``code % 6**k`` are the faces (``greed_env.rules.sample_roll``), ranked among the sorted
    rolls of ``k`` dice in ``combinations_with_replacement`` order.

    The face counts (4 bits per face) of four digits at a time come from the 1,296-entry
    table of 4-digit codes, whose missing leading digits count as 1s and are taken off again.
    A sorted roll is preceded by the rolls that, with the same dice of every lower face, hold
    more dice of face ``f``: multisets of the ``m - c - 1`` other dice over faces ``f..6``."""
    c = np.uint64(code)
    high = np.uint64(tab[np.uint64(tab[T_OFF_POW6] + k)])
    if c >= high:
        c %= high
    four = np.uint64(tab[T_OFF_FOUR])
    if k <= 4:
        packed = tab[four + c] - (4 - k)
    else:
        packed = tab[four + c % np.uint64(1296)] + tab[four + c // np.uint64(1296)] - (8 - k)
    mc = tab[T_OFF_MC]
    rank = 0
    m = k
    for f in range(6):
        n = (packed >> (4 * f)) & 15
        if m > n:
            rank += tab[np.uint64(mc + (6 - f) * 9 + (m - n - 1))]
        m -= n
    return tab[np.uint64(tab[T_OFF_RSTART] + k)] + rank
