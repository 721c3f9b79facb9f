"""TensorBoard scalars of the training scripts, grouped as CleanRL groups them: ``charts/``,
``losses/`` and ``eval/`` (stable-baselines3's ``rollout/``, ``train/`` and ``time/`` keys are
renamed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat

__all__ = ["GroupedTensorBoard", "make_logger"]


_RENAMES = {
    "rollout/ep_rew_mean": "charts/episodic_return",
    "rollout/ep_len_mean": "charts/episodic_length",
    "time/fps": "charts/SPS",
    "train/learning_rate": "charts/learning_rate",
    "train/clip_range": "charts/clip_range",
    "train/n_updates": "charts/updates",
    "train/value_loss": "losses/value_loss",
    "train/policy_gradient_loss": "losses/policy_loss",
    "train/entropy_loss": "losses/entropy",
    "train/approx_kl": "losses/approx_kl",
    "train/clip_fraction": "losses/clipfrac",
    "train/explained_variance": "losses/explained_variance",
    "train/loss": "losses/total_loss",
}


class GroupedTensorBoard(KVWriter):
    """TensorBoard writer with CleanRL's groups: ``charts/``, ``losses/``, ``eval/``.

    stable-baselines3's keys are renamed (``rollout/ep_rew_mean`` -> ``charts/episodic_return``,
    ``train/value_loss`` -> ``losses/value_loss``, ...); ``losses/entropy`` is the policy
    entropy (stable-baselines3 logs its negative); other ``time/`` keys are dropped.
    """

    def __init__(self, folder: str | Path) -> None:
        self.inner = TensorBoardOutputFormat(str(folder))

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        out: dict[str, Any] = {}
        excluded: dict[str, tuple[str, ...]] = {}
        for key, value in key_values.items():
            new = _RENAMES.get(key, key)
            if new.startswith("time/"):
                continue
            if key == "train/entropy_loss":
                value = -value
            out[new] = value
            excluded[new] = key_excluded.get(key, ())
        self.inner.write(out, excluded, step)

    def close(self) -> None:
        self.inner.close()


def make_logger(run_dir: Path) -> Logger:
    """A stable-baselines3 logger writing grouped TensorBoard scalars under ``run_dir/tb``."""
    return Logger(str(run_dir / "tb"), [GroupedTensorBoard(run_dir / "tb")])
