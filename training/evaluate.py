"""Evaluate a bot or trained model (the same as `greed eval`); see `python training/evaluate.py --help`."""

import sys

from greed_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["eval", *sys.argv[1:]]))
