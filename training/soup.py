"""Average runs' weights with greed_env.train.soup (the same as `greed train soup`); see `python training/soup.py --help`."""

import sys

from greed_env.train.soup import cli

if __name__ == "__main__":
    sys.exit(cli())
