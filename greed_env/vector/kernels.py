"""The numba kernels of the vector engine in one namespace (``from greed_env.vector import
kernels as K``), defined by concern in:

* :mod:`greed_env.vector.layout`: the array layouts (game rows derived from
  ``greed_env.rules.State``, episode columns, parameter vectors, the flat table's header);
* :mod:`greed_env.vector.lookup`: table lookups (option rows, roll decoding);
* :mod:`greed_env.vector.game`: the turn flow (new game, rolls, actions, legal moves);
* :mod:`greed_env.vector.policies`: the threshold bot and the solver's duel policy;
* :mod:`greed_env.vector.observe`: observation encoding and action masks;
* :mod:`greed_env.vector.rewards`: rewards and episode ends;
* :mod:`greed_env.vector.episodes`: episode stepping with autoreset and opponents;
* :mod:`greed_env.vector.batch`: game-level batch operations and ring-buffer refills;
* :mod:`greed_env.vector.jit`: the decorators, with one cache stamp over all of them.
"""

from __future__ import annotations

from greed_env.vector.batch import *  # noqa: F403
from greed_env.vector.episodes import *  # noqa: F403
from greed_env.vector.game import *  # noqa: F403
from greed_env.vector.jit import *  # noqa: F403
from greed_env.vector.layout import *  # noqa: F403
from greed_env.vector.lookup import *  # noqa: F403
from greed_env.vector.observe import *  # noqa: F403
from greed_env.vector.policies import *  # noqa: F403
from greed_env.vector.rewards import *  # noqa: F403
