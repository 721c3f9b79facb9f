"""Train with greed_env.train.solo (the same as `greed train solo`); see `python training/solo.py --help`."""

import sys

from greed_env.train.solo import cli

if __name__ == "__main__":
    sys.exit(cli())
