"""The reusable parts of the training scripts in ``training/`` (MaskablePPO and RLlib).

The recipes themselves are the scripts, one readable file each (``training/ppo_turn.py``,
``ppo_duel.py``, ``ppo_selfplay.py``, ``progressive_race.py``, ``ppo_teacher_turn.py``,
``ppo_teacher_duel.py``, ``rllib_selfplay.py``), run as ``python training/NAME.py ...`` or
``greed train NAME ...`` (:mod:`greed_env.train.recipes` finds and runs them). What they import
from here:

* :mod:`~greed_env.train.settings`: the settings they share as dataclasses (the run, export,
  PPO, the network, evaluation, the teacher), their checks and the command line (tyro);
* :mod:`~greed_env.train.run`: the run folder, ``--resume``, the final model and its card;
* :mod:`~greed_env.train.checkpoints`: atomic checkpoints and where a run stands at each;
* :mod:`~greed_env.train.backends`: environment factories and ``--vector subproc|dummy|native``;
* :mod:`~greed_env.train.callback`: periodic evaluation (``eval.csv``), checkpoints, entropy
  schedule, progress;
* :mod:`~greed_env.train.tensorboard`: TensorBoard scalars grouped as ``charts/``, ``losses/``, ``eval/``;
* :mod:`~greed_env.train.network`: the policy network and how the network settings build it;
* :mod:`~greed_env.train.warmstart`: ``--init-from`` and ``--init-temperature``;
* :mod:`~greed_env.train.curriculum`: exploring starts on the native vector engine;
* :mod:`~greed_env.train.shaping`: the solver's potential-based reward shaping;
* :mod:`~greed_env.train.teacher` and :mod:`~greed_env.train.kickstart`: the solver as a teacher
  (exact move values of the engine's rows; the recorder, labels and update loop of
  ``KickstartPPO``, whose loss and weight schedule are the teacher scripts' own);
* :mod:`~greed_env.train.selfplay_env`: one seat of ``greed_v0`` against past snapshots;
* :mod:`~greed_env.train.soup`: the weight average of runs fine-tuned from one model;
* :mod:`~greed_env.train.rllib_curve`: RLlib results and the learning curve on benchmark tasks.

Importing this package, :mod:`greed_env.train.settings` or :mod:`greed_env.train.recipes` does
not import torch.
"""
