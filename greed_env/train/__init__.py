"""The reusable parts of the training scripts in ``training/`` (MaskablePPO and RLlib).

The recipes themselves are the scripts, one readable file each (``training/ppo_turn.py``,
``ppo_duel.py``, ``ppo_selfplay.py``, ``progressive_race.py``, ``rllib_selfplay.py``), run as
``python training/NAME.py ...`` or ``greed train NAME ...`` (:mod:`greed_env.train.scripts`
finds them). What they import from here:

* :mod:`~greed_env.train.args`: the command line from the ``Args`` dataclass, checks, run names;
* :mod:`~greed_env.train.session`: the run folder, ``--resume``, the final model and its card;
* :mod:`~greed_env.train.runs`: run folders, atomic checkpoints, ``eval.csv``;
* :mod:`~greed_env.train.backends`: environment factories and ``--vector subproc|dummy|native``;
* :mod:`~greed_env.train.callback`: periodic evaluation, checkpoints, entropy schedule, progress;
* :mod:`~greed_env.train.tensorboard`: TensorBoard scalars grouped as ``charts/``, ``losses/``, ``eval/``;
* :mod:`~greed_env.train.policy` and :mod:`~greed_env.train.features`: the network;
* :mod:`~greed_env.train.warmstart`: ``--init-from`` and ``--init-temperature``;
* :mod:`~greed_env.train.curriculum`: exploring starts on the native vector engine;
* :mod:`~greed_env.train.shaping`: the solver's potential-based reward shaping;
* :mod:`~greed_env.train.teacher` and :mod:`~greed_env.train.kickstart`: the solver as a teacher
  (exact move values of the engine's rows, the distillation term of ``KickstartPPO``);
* :mod:`~greed_env.train.selfplay_env`: one seat of ``greed_v0`` against past snapshots;
* :mod:`~greed_env.train.soup`: the weight average of runs fine-tuned from one model;
* :mod:`~greed_env.train.rllib_curve`: RLlib results and the learning curve on benchmark tasks.

Importing this package or :mod:`greed_env.train.args` does not import torch.
"""
