"""Train with greed_env.train.selfplay (the same as `greed train selfplay`); see `python training/selfplay.py --help`."""

import sys

from greed_env.train.selfplay import cli

if __name__ == "__main__":
    sys.exit(cli())
