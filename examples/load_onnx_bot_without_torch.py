"""Load a committed ONNX bot with onnxruntime only, and watch it decide.

torch is blocked before anything is imported (``sys.modules["torch"] = None`` makes every
``import torch`` fail), so this runs the same on a machine where only
``pip install 'greed-env[onnx]'`` was done. The bot is found through the registry (package
data or ``agents/``); each decision shows the roll, the legal moves, the policy's logits for
them (masking happens here, in numpy) and the move played.

    python examples/load_onnx_bot_without_torch.py
    python examples/load_onnx_bot_without_torch.py --bot ten_thousand/ppo-turn --decisions 12
"""

from __future__ import annotations

import sys

sys.modules["torch"] = None  # type: ignore[assignment]

import argparse  # noqa: E402

import numpy as np  # noqa: E402

from greed_env.bots import OnnxBot, load  # noqa: E402
from greed_env.bots.onnx_backend import masked_argmax  # noqa: E402
from greed_env.rules import (  # noqa: E402
    Phase,
    apply,
    apply_roll,
    is_chance,
    is_over,
    new_game,
    preset,
    sample_roll,
)
from greed_env.spaces.observation import encode_observation  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot", default="ten_thousand/ppo-turn", help="registry id of an ONNX bot")
    parser.add_argument("--decisions", type=int, default=8, help="decisions to show")
    parser.add_argument("--seed", type=int, default=1, help="dice seed")
    args = parser.parse_args()

    rules = preset(args.bot.split("/")[0])
    bot = load(args.bot, rules=rules)
    if not isinstance(bot, OnnxBot):
        raise SystemExit(f"{args.bot} is not an ONNX bot")
    card = bot.card
    print(f"{card['id']}: {card['description']}")
    print(f"  ONNX {card['onnx']['file']} ({card['onnx']['bytes']:,} bytes, sha256 {card['onnx']['sha256'][:12]}...)")
    print(f"  rules {card['rules_name']} ({card['rules_fingerprint']}), obs spec v{card['obs_spec_version']}, "
          f"catalog v{card['action_catalog_version']} ({card['num_actions']} actions)")

    dice = np.random.default_rng(args.seed)
    rng = np.random.default_rng(0)
    s = new_game(rules, 2, first_player=0)
    shown = 0
    while shown < args.decisions and not is_over(s):
        if is_chance(s):
            s = apply_roll(rules, s, sample_roll(rules, s, dice))
            continue
        mask, moves = bot.catalog.legal(s)
        logits = bot.logits(encode_observation(rules, s))
        move = bot.act(rules, s, rng)
        assert moves[masked_argmax(logits, mask)] == move
        where = f"roll {' '.join(map(str, s.roll))}" if s.phase == Phase.KEEP else f"{s.dice} dice to roll"
        ranked = sorted(moves, key=lambda a: -logits[a])
        options = ", ".join(f"{moves[a]} ({logits[a]:+.2f})" for a in ranked[:4])
        print(f"seat {s.player}, scores {s.scores}, turn total {s.turn_total}, {where}")
        print(f"  legal (best logits first): {options}{' ...' if len(ranked) > 4 else ''}")
        print(f"  plays {move}")
        s = apply(rules, s, move)
        shown += 1
    print("torch imported:", sys.modules.get("torch") is not None)


if __name__ == "__main__":
    main()
