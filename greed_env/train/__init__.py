"""PPO training of greed_env agents (sb3-contrib MaskablePPO) in CleanRL's spirit.

One readable module per script, each with a dataclass ``Args`` (a docstring per field), a
seeding block and a ``main(args)``:

* :mod:`greed_env.train.solo`: ``greed_env/Solitaire-v0``, objective ``turn`` or ``race``;
* :mod:`greed_env.train.duel`: ``greed_env/Duel-v0`` against a chosen opponent bot;
* :mod:`greed_env.train.selfplay`: 2-8 players on the PettingZoo env, one shared policy
  against a pool of its own past snapshots.

The shared machinery (argument parsing from the dataclass, run directories, checkpoints and
``--resume``, TensorBoard key groups, the progress bar, periodic evaluation against the exact
solver, the model card) lives in :mod:`greed_env.train.args`, :mod:`~greed_env.train.runs`,
:mod:`~greed_env.train.backends`, :mod:`~greed_env.train.tensorboard`,
:mod:`~greed_env.train.callback`, :mod:`~greed_env.train.warmstart` and the loop that joins
them, :mod:`~greed_env.train.loop`. Importing this package, the
``Args`` classes or :mod:`greed_env.train.args` does not import torch; ``main`` does.
Run them as ``greed train solo|duel|selfplay ...`` (or ``python -m greed_env.train.solo ...``);
the recipes behind docs/results.md, seeds of these runs with their table, as
``greed train recipe turn|duel ...`` (:mod:`greed_env.train.recipes`).
"""

SCRIPTS = ("solo", "duel", "selfplay")
