"""The training scripts: one readable file per recipe (see README.md beside this file).

Each script is run as ``python training/NAME.py ARGS`` or ``greed train NAME ARGS``; an install
of greed_env carries them as the package ``greed_env.training``.
"""
