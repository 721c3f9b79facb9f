"""How each backend turns logits into a move: the ONNX bot's sampling temperature, exact ties,
masking in the SB3 and numpy backends, and the card's checksum guarding the graph it runs.

Each test pins a number a wrong formula would change (a temperature multiplied instead of
divided, the last of tied logits, a mask left out, a checksum not compared) rather than only
asking for a legal move."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots.errors import CorruptBotError
from greed_env.bots.export import encode_positions, sample_positions
from greed_env.bots.loader import load
from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot, load_policy
from greed_env.bots.onnx_backend import OnnxBot, masked_argmax
from greed_env.rules import apply_roll, new_game, preset
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM, encode_observation

RULES = preset("ten_thousand")
SHIPPED = Path(__file__).resolve().parents[2] / "agents" / "ten_thousand"


def _softmax(z: np.ndarray) -> np.ndarray:
    p = np.exp(z - z.max())
    return p / p.sum()


@pytest.mark.parametrize("temperature", [0.25, 4.0])
def test_sampling_draws_from_the_softmax_of_the_logits_divided_by_the_temperature(temperature: float) -> None:
    """The shipped turn bot on 1,1,2,3,5,5 (eight keeps, logits from 4.6 down to -8): 4,000
    seeded draws match ``softmax(logits / T)`` over the legal moves within 0.03 in total
    variation, where ``softmax(logits * T)`` lies more than 0.3 away at both temperatures."""
    bot = load("ten_thousand/ppo-turn", RULES, temperature=temperature)
    state = apply_roll(RULES, new_game(RULES, 2, first_player=0), (1, 1, 5, 5, 2, 3))
    mask, _ = ActionCatalog(RULES).legal(state)
    obs = encode_observation(RULES, state)
    legal = mask.astype(bool)
    logits = bot.logits(obs).astype(np.float64)
    want = np.zeros(len(mask))
    want[legal] = _softmax(logits[legal] / temperature)
    wrong = np.zeros(len(mask))
    wrong[legal] = _softmax(logits[legal] * temperature)
    assert 0.5 * np.abs(want - wrong).sum() > 0.3  # the draws can tell the two apart
    rng = np.random.default_rng(20_261_205)
    draws = np.bincount([bot.act_obs(obs, mask, rng) for _ in range(4000)], minlength=len(mask))
    assert draws[~legal].sum() == 0
    assert 0.5 * np.abs(draws / draws.sum() - want).sum() < 0.03


def test_a_tiny_temperature_plays_the_greedy_move() -> None:
    greedy = load("ten_thousand/ppo-turn", RULES)
    cold = load("ten_thousand/ppo-turn", RULES, temperature=1e-3)
    rng = np.random.default_rng(0)
    for roll in [(1, 1, 5, 5, 2, 3), (1, 1, 1, 5, 5, 2), (1, 5, 5, 2, 2, 3)]:
        state = apply_roll(RULES, new_game(RULES, 2, first_player=0), roll)
        assert cold.act(RULES, state, rng) == greedy.act(RULES, state, rng)


# logits with exact ties: 5 at ids 1, 2 and 4, and 9 at id 5
TIED = np.array([0.0, 5.0, 5.0, 1.0, 5.0, 9.0], dtype=np.float32)
MASKS = np.array(
    [
        [1, 1, 1, 1, 1, 0],  # the tied 5s are the best legal: the first of them, id 1
        [0, 0, 1, 1, 1, 0],  # id 1 masked: the next tied one, id 2
        [1, 0, 0, 1, 0, 0],  # no tie left: id 3
        [1, 1, 1, 1, 1, 1],  # the 9
        [0, 0, 0, 0, 1, 1],
    ],
    dtype=np.int8,
)
CHOSEN = [1, 2, 3, 5, 5]


def test_greedy_backends_break_exact_ties_toward_the_lowest_legal_id() -> None:
    """ONNX's ``masked_argmax`` and the numpy backend pick the first of tied logits, as
    ``MaskablePPO.predict`` (torch's argmax) does, so the backends play the same moves."""
    assert masked_argmax(np.tile(TIED, (len(MASKS), 1)), MASKS).tolist() == CHOSEN
    assert [masked_argmax(TIED, m) for m in MASKS] == CHOSEN
    head = (np.zeros((len(TIED), 4), np.float32), TIED)
    policy = NumpyPolicy([(np.zeros((4, OBS_DIM), np.float32), np.zeros(4, np.float32))], head, "relu")
    obs = np.random.default_rng(1).normal(size=(len(MASKS), OBS_DIM)).astype(np.float32)
    assert policy.act(obs, MASKS).tolist() == CHOSEN


@pytest.fixture(scope="module")
def ramp_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MaskablePPO for ten_thousand whose logits are the action ids themselves (weights 0,
    bias 0, 1, 2, ...): the last action, illegal almost everywhere, is its favourite."""
    import torch
    from sb3_contrib import MaskablePPO

    from greed_env.envs.solitaire import SolitaireEnv

    model = MaskablePPO("MlpPolicy", SolitaireEnv(RULES, objective="turn"), seed=0, device="cpu",
                        n_steps=32, batch_size=32, policy_kwargs={"net_arch": [8]})  # fmt: skip
    with torch.no_grad():
        model.policy.action_net.weight.zero_()
        model.policy.action_net.bias.copy_(torch.arange(model.action_space.n, dtype=torch.float32))
    path = tmp_path_factory.mktemp("ramp") / "model.zip"
    model.save(path)
    return path


def test_sb3_and_numpy_backends_play_the_best_legal_action_never_a_masked_one(ramp_model: Path) -> None:
    """With logits rising with the id, the masked greedy action is the highest legal id of
    each position; a backend that drops the mask plays the last id of the catalog."""
    states = sample_positions(RULES, 300, np.random.default_rng(3))
    obs, masks = encode_positions(RULES, states)
    highest_legal = np.array([np.flatnonzero(m).max() for m in masks])
    assert (highest_legal < masks.shape[1] - 1).mean() > 0.9  # the favourite is mostly masked
    ppo = PolicyBot(load_policy(ramp_model, RULES), RULES)  # what a .zip bot spec plays
    assert np.array_equal(ppo.act_ids(obs, masks), highest_legal)
    from greed_env.bots.sb3_backend import PPOBot

    sb3 = PPOBot(ramp_model, RULES)
    assert np.array_equal(sb3.act_batch(obs, masks), highest_legal)
    catalog = ActionCatalog(RULES)
    rng = np.random.default_rng(0)
    for state, best in zip(states[:30], highest_legal[:30], strict=True):
        _, moves = catalog.legal(state)
        assert sb3.act(RULES, state, rng) == moves[best] == ppo.act(RULES, state, rng)


def _copy_shipped(name: str, to: Path) -> Path:
    for suffix in (".json", ".onnx"):
        shutil.copy(SHIPPED / f"{name}{suffix}", to / f"{name}{suffix}")
    return to / f"{name}.json"


def test_a_valid_graph_that_is_not_the_cards_is_refused_by_its_checksum(tmp_path: Path) -> None:
    """The duel bot's ONNX put in place of the turn bot's parses, runs and fits the card's
    shapes: only the checksum tells that the card does not describe it."""
    card = _copy_shipped("ppo-turn", tmp_path)
    assert isinstance(OnnxBot.from_card(card), OnnxBot)
    duel = (SHIPPED / "ppo-duel.onnx").read_bytes()
    assert json.loads((SHIPPED / "ppo-duel.json").read_text())["num_actions"] == json.loads(card.read_text())["num_actions"]
    card.with_suffix(".onnx").write_bytes(duel)
    with pytest.raises(CorruptBotError, match=r"checksum mismatch for ppo-turn\.onnx"):
        OnnxBot.from_card(card)
    with pytest.raises(CorruptBotError, match="checksum mismatch"):
        load(str(card), RULES)
