"""Train with greed_env.train.duel (the same as `greed train duel`); see `python training/duel.py --help`."""

import sys

from greed_env.train.duel import cli

if __name__ == "__main__":
    sys.exit(cli())
