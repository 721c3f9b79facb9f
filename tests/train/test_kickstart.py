"""Teacher-assisted PPO: the distillation term (value, gradient sign, masks), its schedule (the
teacher scripts' own), the rows recorded for the teacher, and the update once the weight is 0
(exactly PPO's)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecMonitor
from training_settings import load_script

from greed_env.bots.export import portable_args
from greed_env.rules import preset
from greed_env.train.kickstart import KickstartPPO, RowRecorder, distillation_loss
from greed_env.train.network import policy_class, policy_kwargs
from greed_env.train.teacher import TeacherLabeller
from greed_env.vector.engine import BatchGame, EpisodeBatch
from greed_env.vector.sb3 import make_sb3_vec_env


def _masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(torch.where(mask, logits, torch.tensor(-1e8)), dim=1)


def test_distillation_loss_is_the_kl_over_legal_moves() -> None:
    logits = torch.tensor([[0.3, -1.0, 2.0, 0.5], [1.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[True, True, False, True], [True, True, True, True]])
    actions = torch.tensor([[0, 3, -1], [1, 2, -1]])
    probs = torch.tensor([[0.25, 0.75, 0.0], [0.5, 0.5, 0.0]])
    labelled = torch.tensor([True, False])
    lp = _masked_log_probs(logits, mask)
    got = distillation_loss(lp, actions, probs, labelled)
    student = torch.softmax(torch.tensor([0.3, -1.0, 0.5]), dim=0)  # the legal moves only
    expect = 0.25 * np.log(0.25 / float(student[0])) + 0.75 * np.log(0.75 / float(student[2]))
    assert float(got) == pytest.approx(expect, rel=1e-5)
    both = distillation_loss(lp, actions, probs, torch.tensor([True, True]))
    other = 0.5 * np.log(0.5 / float(torch.softmax(logits[1], 0)[1])) * 2
    assert float(both) == pytest.approx((expect + other) / 2, rel=1e-5)
    none = distillation_loss(lp, actions, probs, torch.tensor([False, False]))
    assert float(none) == 0.0


def test_distillation_gradient_moves_logits_toward_the_teacher_and_ignores_masked_moves() -> None:
    logits = torch.tensor([[1.0, 0.0, 3.0, 0.5, -0.5]], requires_grad=True)
    mask = torch.tensor([[True, True, False, True, True]])
    actions = torch.tensor([[3, 1]])
    probs = torch.tensor([[0.9, 0.1]])
    loss = distillation_loss(_masked_log_probs(logits, mask), actions, probs, torch.tensor([True]))
    loss.backward()
    grad = logits.grad[0]
    student = torch.softmax(torch.tensor([1.0, 0.0, 0.5, -0.5]), dim=0)
    teacher = torch.tensor([0.0, 0.1, 0.9, 0.0])
    legal = [0, 1, 3, 4]
    assert torch.allclose(grad[legal], student - teacher, atol=1e-6)  # d KL / d logit = student - teacher
    assert grad[2] == 0.0  # the masked move gets no gradient at all
    assert grad[3] < 0 and grad[0] > 0  # descent raises the teacher's move and lowers the others
    with torch.no_grad():
        stepped = logits - 0.5 * logits.grad
    after = distillation_loss(_masked_log_probs(stepped, mask), actions, probs, torch.tensor([True]))
    assert float(after) < float(loss.detach())


@pytest.mark.parametrize("script", ["ppo_teacher_turn", "ppo_teacher_duel"])
def test_schedule_anneals_to_exactly_zero(script: str) -> None:
    module = load_script(script)
    args = module.Args(teacher_weight=3.0, teacher_until=0.5, total_timesteps=800)
    weight = functools.partial(module.teacher_weight, args)
    assert [weight(k) for k in (0, 100, 200, 399)] == [3.0, 2.25, 1.5, pytest.approx(0.0075)]
    assert weight(400) == 0.0 and weight(10**9) == 0.0
    assert module.teacher_weight(module.Args(teacher_weight=0.0), 0) == 0.0
    with pytest.raises(ValueError, match="--teacher-weight"):
        module.Args(teacher_weight=-1.0).check()
    with pytest.raises(ValueError, match="--teacher-until"):
        module.Args(teacher_until=-0.1).check()


def _model(cls: type, weight: float, until: int, recorder: bool = True, learning_rate: float = 3e-4) -> tuple[MaskablePPO, RowRecorder | None]:
    rules = preset("greed")
    torch.manual_seed(0)
    venv = VecMonitor(make_sb3_vec_env("greed_env/Solitaire-v0", 8, seed=3, rules=rules, objective="turn"))
    rec = RowRecorder(venv) if recorder else None
    script = load_script("ppo_teacher_turn")
    args = script.Args(rules="greed", net_width=16, lean_masking=False, teacher_weight=weight, teacher_until=1.0,
                       total_timesteps=until)
    kwargs = dict(n_steps=16, batch_size=32, n_epochs=2, gamma=1.0, policy_kwargs=policy_kwargs(args, rules),
                  seed=1, device="cpu", learning_rate=learning_rate)
    if cls is KickstartPPO:
        teacher = TeacherLabeller(rules, "turn")
        model = KickstartPPO(policy_class(args), rec, teacher=teacher, teacher_weight=functools.partial(
            script.teacher_weight, args), minibatch_loss=script.minibatch_loss, **kwargs)
    else:
        model = MaskablePPO(policy_class(args), rec if rec is not None else venv, **kwargs)
    return model, rec


def _record_updates(model: KickstartPPO, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, float]]:
    """The updates ``model`` makes from now on, as (steps done, teacher weight): weight 0.0 for
    MaskablePPO's own ``train``, the term's weight for an update with the distillation term."""
    updates: list[tuple[int, float]] = []
    plain_train, with_teacher = MaskablePPO.train, model._train_with_teacher

    def plain(self: MaskablePPO) -> None:
        updates.append((self.num_timesteps, 0.0))
        plain_train(self)

    def distilled(weight: float) -> None:
        updates.append((model.num_timesteps, weight))
        with_teacher(weight)

    monkeypatch.setattr(MaskablePPO, "train", plain)
    monkeypatch.setattr(model, "_train_with_teacher", distilled)
    return updates


def test_the_term_anneals_away_then_each_update_is_exactly_maskable_ppo(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.set_num_threads(1)
    plain, _ = _model(MaskablePPO, 0.0, 0)
    plain.learn(3 * 128)
    kick, _ = _model(KickstartPPO, 1.0, 256)
    updates = _record_updates(kick, monkeypatch)
    kick.learn(3 * 128)
    monkeypatch.undo()
    # the term is on for the first update only, at the schedule's weight after 128 of 256
    # steps; from step 256 on each update is MaskablePPO's own and labels nothing
    assert updates == [(128, 0.5), (256, 0.0), (384, 0.0)]
    assert kick.label_seconds > 0.0  # the first update's positions were labelled
    weights = []
    for steps in (0, 64, 128, 255, 256, 10**6):
        kick.num_timesteps = steps
        weights.append(kick.teacher_weight())
    assert weights == [1.0, 0.75, 0.5, pytest.approx(1 / 256), 0.0, 0.0]
    off, _ = _model(KickstartPPO, 0.0, 0)
    off.learn(3 * 128)
    ref = plain.policy.state_dict()
    for name, value in off.policy.state_dict().items():
        assert torch.equal(value, ref[name]), name  # no teacher: MaskablePPO's update, bit for bit


def test_teacher_term_raises_agreement_with_the_teacher() -> None:
    torch.set_num_threads(1)
    model, rec = _model(KickstartPPO, 5.0, 10**6, learning_rate=3e-3)
    assert rec is not None and model.recorder is rec
    fresh, _ = _model(KickstartPPO, 0.0, 0)
    model.learn(8 * 128)
    batch = EpisodeBatch(preset("greed"), 16, mode="turn")
    batch.reset(seed=11)
    rng = np.random.default_rng(2)
    agree = {"trained": 0, "fresh": 0}
    total = 0
    for _ in range(30):
        best = model.teacher.best_actions(batch.S, batch.mask)
        obs = torch.as_tensor(batch.obs.copy())
        with torch.no_grad():
            for key, m in (("trained", model), ("fresh", fresh)):
                dist = m.policy.get_distribution(obs, action_masks=batch.mask.copy())
                agree[key] += int((dist.distribution.probs.argmax(dim=1).numpy() == best).sum())
        total += best.size
        batch.step(batch.random_actions(rng))
    assert agree["trained"] / total > agree["fresh"] / total + 0.2
    assert model.label_seconds > 0.0


def test_recorder_keeps_the_rows_behind_each_observation() -> None:
    rules = preset("greed")
    venv = RowRecorder(VecMonitor(make_sb3_vec_env("greed_env/Solitaire-v0", 4, seed=1, rules=rules, objective="turn")))
    obs = venv.reset()
    rng = np.random.default_rng(0)
    seen = [obs]
    for _ in range(5):
        masks = np.stack(venv.env_method("action_masks"))
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, *_ = venv.step(acts)
        seen.append(obs)
    rows = venv.take()
    assert rows.shape[:2] == (5, 4) and venv.take().shape[0] == 0
    game = BatchGame(rules, 4, num_players=1)
    for k in range(5):
        game.S[:] = rows[k]
        assert np.allclose(game.observations(), seen[k])
    with pytest.raises(ValueError, match="native"):
        from stable_baselines3.common.vec_env import DummyVecEnv

        from greed_env.envs.solitaire import SolitaireEnv

        RowRecorder(DummyVecEnv([lambda: SolitaireEnv(rules)]))


def test_saved_model_loads_as_maskable_ppo(tmp_path: Path) -> None:
    model, _ = _model(KickstartPPO, 1.0, 10**6)
    model.learn(128)
    path = tmp_path / "model.zip"
    model.save(path)
    loaded = MaskablePPO.load(path, device="cpu")
    for name, value in loaded.policy.state_dict().items():
        assert torch.equal(value, model.policy.state_dict()[name])


def test_a_card_records_run_arguments_without_machine_paths() -> None:
    """A second stage started from another run, and Trippn's value arrays, are recorded by
    their run and file names; relative paths and other values stay as given."""
    args = {
        "runs_dir": "/tmp/x/runs",
        "init_from": "/tmp/x/runs/prog_duel_1/model.zip",
        "teacher_arrays": "/data/trippn_turn.npz",
        "export_dir": "agents",
        "seed": 2,
        "opponent": "threshold-1000",
    }
    assert portable_args(args) == {
        "runs_dir": "runs",
        "init_from": "runs/prog_duel_1/model.zip",
        "teacher_arrays": "trippn_turn.npz",
        "export_dir": "agents",
        "seed": 2,
        "opponent": "threshold-1000",
    }
    assert args["runs_dir"] == "/tmp/x/runs"  # the run's own record is left alone
    checkpoint = {"init_from": "/tmp/x/runs/trippn_1/checkpoints/step_000001015808.zip"}
    assert portable_args(checkpoint) == {"init_from": "runs/trippn_1/checkpoints/step_000001015808.zip"}
