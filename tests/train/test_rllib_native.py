"""``NativeSelfPlayEnv``: many native-engine games as one RLlib multi-agent env.

Random legal play to the end of every game: each seat is paid once, when its game ends, the
pot shares of ``greed_v0`` (``num_players * share - 1``, zero-sum per game, winners at or past
the target); only the player to act of a running game is observed; the same seed replays the
same games. Also the config errors, and one RLlib sample on it.
"""

from __future__ import annotations

import numpy as np
import pytest

from greed_env.rllib.native import NativeSelfPlayEnv, agent_id
from greed_env.vector import kernels as K


def _play(seed: int, games: int = 6, players: int = 3) -> tuple[dict[str, float], int]:
    env = NativeSelfPlayEnv({"rules": "ten_thousand", "num_players": players, "num_games": games})
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    paid: dict[str, float] = {}
    done: set[str] = set()
    steps = 0
    while True:
        assert len(obs) <= games and not set(obs) & done
        assert len({a.split("_")[0] for a in obs}) == len(obs)  # one agent per game
        actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()}
        obs, rewards, terms, truncs, _ = env.step(actions)
        steps += len(actions)
        assert set(actions) <= set(rewards) and not truncs["__all__"]
        for a, r in rewards.items():
            if a in terms:
                assert a not in paid
                paid[a] = r
            else:
                assert r == 0.0
        done |= {a for a in terms if a != "__all__"}
        if terms["__all__"]:
            break
    assert done == {agent_id(g, p) for g in range(games) for p in range(players)}
    for g in range(games):
        shares = [paid[agent_id(g, p)] for p in range(players)]
        assert sum(shares) == pytest.approx(0.0) and max(shares) > 0
        winners = int(env.game.S[g, K.C_WINNERS])
        scores = env.game.fields(g)["scores"]
        for p in range(players):
            if (winners >> p) & 1:
                assert scores[p] >= env.rules.target
    return paid, steps


def test_random_play_pays_each_seat_its_pot_share_once() -> None:
    first = _play(seed=3)
    assert first == _play(seed=3)
    assert first != _play(seed=4)


def test_bad_config_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown env_config keys"):
        NativeSelfPlayEnv({"num_gamez": 3})
    with pytest.raises(ValueError, match="num_players"):
        NativeSelfPlayEnv({"num_players": 1})
    with pytest.raises(ValueError, match="num_games"):
        NativeSelfPlayEnv({"num_games": 0})


def test_bench_rllib_baselines_play_legal_random_moves(repo_root: object) -> None:
    import importlib.util
    from pathlib import Path

    path = Path(str(repo_root)) / "benchmarks" / "bench_rllib.py"
    spec = importlib.util.spec_from_file_location("bench_rllib", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rng = np.random.default_rng(0)
    masks = (rng.random((200, 12)) < 0.3).astype(np.int8)
    masks[:, 5] = 1
    picks = bench._pick(masks, rng.random(200))
    assert masks[np.arange(200), picks].all() and len(set(picks.tolist())) > 3
    assert bench.bench_pettingzoo("farkle", 3, 300, 1) > 0
    assert bench.bench_native("farkle", 3, 16, 600, 1) > 0
