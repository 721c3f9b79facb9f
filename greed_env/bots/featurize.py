"""Fixed input features computed from the observation inside the policy (numpy reference).

The environment's observation scales points by the target (a 50-point step of the turn total is
0.005 in ``ten_thousand``) and dice counts by the number of dice, which a small network resolves
slowly. :func:`featurize` appends exact, parameter-free readings of the same entries:

* per face, a thermometer of the dice showing (``count >= k`` for ``k = 1 .. num_dice``);
* a thermometer of the dice in hand;
* the turn total in thousands of points, and its thermometer every ``points_step`` points up
  to ``points_max``;
* thermometers of my banked score and the next seat's every ``score_step`` points up to the
  target;
* with ``margin_step`` set (``--features margin``, version 2): the margin after banking, my banked
  score plus the turn total less the best banked score of the other seats, in thousands of
  points and as a thermometer every ``margin_step`` points from ``margin_low`` to
  ``margin_high``. It is the number a duel's bank-or-roll decision turns on (roll on in the final
  round while it is not positive), which the separate score readings leave to the network to
  subtract at a 50-point resolution. The readings are appended last, so a version-1 network is
  a version-2 one whose weights on them are zero (``--init-from`` pads them so).
* with ``margin_final`` as well (``--features margin-final``): the margin readings are zero
  outside a final round. Before it, a positive margin is no reason to bank (banking that
  reaches the target just ahead of an opponent close to it loses), and a network that reads
  the margin everywhere carries "bank once ahead" from the final round over to the turn
  before it.
* with ``margin_cross`` as well (``--features margin-cross``): a second copy of the margin
  readings, read only before a final round and only when banking would reach the target, that
  is when banking starts the final round and the margin is what the others must beat in it.
  Banking there with a small margin over an opponent close to the target hands that opponent a
  last turn that needs little (in ``ten_thousand``, me 9,700, opponent 9,850, 300 on the table:
  banking wins 6%, rolling on 45%), which is neither the final round's rule (bank once ahead)
  nor the rest of the game's. The crossing readings come after the margin readings, so a
  ``margin-final`` network is a ``margin-cross`` one whose weights on them are zero.
* with ``bar_readings`` (version 3; set by :meth:`FeatureConfig.for_rules` for rules whose
  reroll-all must be beaten, ``greed``): the points the next keep must beat after a reroll of
  all the dice, in thousands and as a thermometer on the turn total's levels (all zero while
  no bar is set). After a reroll the turn total is 0, so without them the bar (the points given
  up, 50-3,000) reaches the network only as 0.005-0.3 of the target, while the value of the
  position falls steeply with it (``greed``: about 450 points at a bar of 50, 300 at 200). The
  readings come last, so a network without them is one whose weights on them are zero.
* with ``set_readings`` (version 4; set by :meth:`FeatureConfig.for_rules` for carry-over
  rules, ``progressive``): per face, a thermometer of the dice in its working set (``count >=
  k`` for ``k = 1 .. num_dice``). A working set decides what every further die of its face is
  worth (a fourth 2 on a working set of three 2s scores, a lone 2 does not), and the
  observation gives its size only as a fraction of the dice. The readings come after the
  margin and bar readings.
* with ``need_readings`` (version 5; ``--need-readings``, rules with an exact target such as
  ``progressive``): the points still needed to land on the target after banking now, target
  less my banked score less the turn total on my turn, in thousands and as a thermometer on
  the turn total's levels (all zero on the target itself). Under an exact target a keep that
  passes the target loses the turn and the game is won only by landing on it, so every
  endgame keep turns on that difference, which the score and turn-total thermometers leave
  the network to subtract at 50-point resolution. The readings come last.

The torch module :class:`greed_env.train.network.GreedFeatures` computes the same thing inside
the policy network, so saved models, exported ONNX graphs and :class:`NumpyPolicy` all see the
observation of the environment unchanged. Thresholds sit half a step below each value, so float
rounding of the scaled observation never moves a reading.

>>> from greed_env.rules import preset
>>> from greed_env.spaces.observation import OBS_DIM
>>> cfg = FeatureConfig.for_rules(preset("ten_thousand"))
>>> cfg.extra_dim, cfg.out_dim(OBS_DIM) - OBS_DIM
(183, 183)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from greed_env.rules import IllegalKeep, Rules, read_keep
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_INDEX

__all__ = ["FEATURES_VERSION", "FeatureConfig", "action_features", "featurize"]

FEATURES_VERSION = 5

I_SHOWING = OBS_INDEX["showing_1"]
I_IN_HAND = OBS_INDEX["dice_in_hand"]
I_TURN_TOTAL = OBS_INDEX["turn_total"]
I_SCORE = OBS_INDEX["score_0"]
I_PRESENT = OBS_INDEX["seat_present_0"]
I_MY_TURN = OBS_INDEX["my_turn"]
I_FINAL_ROUND = OBS_INDEX["final_round"]
I_BAR = OBS_INDEX["bar"]
I_SET = OBS_INDEX["working_set_1"]
MAX_SEATS = I_SCORE - I_PRESENT
MARGIN_CLIP = 10.0
"""The linear margin reading is clipped to +-10,000 points."""
CROSS_SLACK = 0.5
"""Points under the target at which banking counts as reaching it (scores are whole points; the
slack absorbs float rounding of the scaled observation)."""


@dataclass(frozen=True)
class FeatureConfig:
    """Parameters of the feature readings (all in points or dice)."""

    num_dice: int
    target: int
    points_step: int = 50
    points_max: int = 3000
    score_step: int = 250
    margin_step: int = 0
    margin_low: int = 0
    margin_high: int = 0
    margin_final: bool = False
    margin_cross: bool = False
    bar_readings: bool = False
    set_readings: bool = False
    need_readings: bool = False
    version: int = FEATURES_VERSION

    @classmethod
    def for_rules(
        cls, rules: Rules, margin: bool = False, final_only: bool = False, cross: bool = False
    ) -> FeatureConfig:
        """The readings for ``rules``; ``margin`` adds the margin after banking (``final_only``:
        read in final rounds only, zero elsewhere; ``cross``: and a copy read when banking would
        reach the target before a final round).

        The margin thermometer spans -30% .. +10% of the target in 50-point steps
        (-3,000 .. +1,000 in ``ten_thousand``): final-round deficits and the lead worth
        stopping at lie there.

        Rules whose reroll-all sets a bar to beat (``reroll_all_must_beat``) get the bar readings,
        carry-over rules the working-set readings.
        """
        bar = bool(rules.reroll_all and rules.reroll_all_must_beat)
        sets = bool(rules.carry_over)
        if not margin:
            return cls(num_dice=rules.num_dice, target=rules.target, bar_readings=bar, set_readings=sets)
        step = 50
        low = -step * max(1, (3 * rules.target) // (10 * step))
        high = step * max(1, rules.target // (10 * step))
        return cls(
            rules.num_dice,
            rules.target,
            margin_step=step,
            margin_low=low,
            margin_high=high,
            margin_final=final_only,
            margin_cross=cross,
            bar_readings=bar,
            set_readings=sets,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FeatureConfig:
        """Read a saved config; versions 1 (before the margin readings), 2 (before the bar
        readings) and 3 (before the working-set readings) load without them."""
        version = data.get("version", 0)
        if version not in (1, 2, 3, 4, FEATURES_VERSION):
            raise ValueError(f"feature version {version!r} is not 1, 2, 3, 4 or {FEATURES_VERSION}")
        fields = dict(data)
        if version == 1 and any(k.startswith("margin") for k in fields):
            raise ValueError("feature version 1 has no margin readings")
        if version < 3 and "bar_readings" in fields:
            raise ValueError(f"feature version {version} has no bar readings")
        if version < 4 and fields.get("set_readings"):
            raise ValueError(f"feature version {version} has no working-set readings")
        if version < 5 and fields.get("need_readings"):
            raise ValueError(f"feature version {version} has no readings of the points needed")
        fields["version"] = FEATURES_VERSION
        cfg = cls(**fields)
        if cfg.margin_step < 0 or (cfg.margin_step and cfg.margin_low >= cfg.margin_high):
            raise ValueError(f"bad margin readings {cfg.margin_low}..{cfg.margin_high} by {cfg.margin_step}")
        if (cfg.margin_final or cfg.margin_cross) and not cfg.margin_step:
            raise ValueError("margin_final and margin_cross need the margin readings (margin_step > 0)")
        return cfg

    def dice_levels(self) -> np.ndarray:
        return np.arange(1, self.num_dice + 1, dtype=np.float32) - 0.5

    def point_levels(self) -> np.ndarray:
        steps = np.arange(self.points_step, self.points_max + 1, self.points_step, dtype=np.float32)
        return steps - self.points_step / 2

    def score_levels(self) -> np.ndarray:
        steps = np.arange(self.score_step, self.target + 1, self.score_step, dtype=np.float32)
        return steps - self.score_step / 2

    def margin_levels(self) -> np.ndarray:
        if not self.margin_step:
            return np.zeros(0, dtype=np.float32)
        steps = np.arange(self.margin_low, self.margin_high + 1, self.margin_step, dtype=np.float32)
        return steps - self.margin_step / 2

    @property
    def margin_dim(self) -> int:
        """Readings of the margin (the linear one and the thermometer), 0 without them."""
        return 1 + len(self.margin_levels()) if self.margin_step else 0

    @property
    def extra_dim(self) -> int:
        base = 7 * self.num_dice + 1 + len(self.point_levels()) + 2 * len(self.score_levels())
        margins = self.margin_dim * (2 if self.margin_cross else 1)
        return base + margins + self.bar_dim + self.set_dim + self.need_dim

    @property
    def bar_dim(self) -> int:
        """Readings of the reroll-all bar (the linear one and the thermometer), 0 without them."""
        return 1 + len(self.point_levels()) if self.bar_readings else 0

    @property
    def set_dim(self) -> int:
        """Readings of the working sets (a thermometer per face), 0 without them."""
        return 6 * self.num_dice if self.set_readings else 0

    @property
    def need_dim(self) -> int:
        """Readings of the points needed to land on the target (linear and thermometer), 0
        without them."""
        return 1 + len(self.point_levels()) if self.need_readings else 0

    def out_dim(self, obs_dim: int) -> int:
        return obs_dim + self.extra_dim


def featurize(obs: np.ndarray, cfg: FeatureConfig) -> np.ndarray:
    """``[obs, readings]`` for a batch ``(B, OBS_DIM)`` of observations, float32."""
    x = np.asarray(obs, dtype=np.float32)
    nd = np.float32(cfg.num_dice)
    target = np.float32(cfg.target)
    dice_lv = cfg.dice_levels()
    counts = x[:, I_SHOWING : I_SHOWING + 6] * nd
    showing = (counts[:, :, None] >= dice_lv[None, None, :]).reshape(len(x), -1)
    in_hand = x[:, I_IN_HAND : I_IN_HAND + 1] * nd >= dice_lv[None, :]
    total = x[:, I_TURN_TOTAL : I_TURN_TOTAL + 1] * target
    total_lv = total >= cfg.point_levels()[None, :]
    scores = x[:, I_SCORE : I_SCORE + 2] * target
    score_lv = (scores[:, :, None] >= cfg.score_levels()[None, None, :]).reshape(len(x), -1)
    parts = [x, showing, in_hand, total / np.float32(1000.0), total_lv, score_lv]
    if cfg.margin_step:
        margin = margin_points(x, target)
        lin = np.clip(margin / np.float32(1000.0), -MARGIN_CLIP, MARGIN_CLIP)
        thermo = margin >= cfg.margin_levels()[None, :]
        final = x[:, I_FINAL_ROUND : I_FINAL_ROUND + 1] > 0.5
        gate = final if cfg.margin_final else np.True_
        parts += [lin * gate, thermo & gate]
        if cfg.margin_cross:
            cross = ~final & (banked_after(x, target) >= target - np.float32(CROSS_SLACK))
            parts += [lin * cross, thermo & cross]
    if cfg.bar_readings:
        bar = x[:, I_BAR : I_BAR + 1] * target
        parts += [bar / np.float32(1000.0), bar >= cfg.point_levels()[None, :]]
    if cfg.set_readings:
        sets = x[:, I_SET : I_SET + 6] * nd
        parts.append((sets[:, :, None] >= dice_lv[None, None, :]).reshape(len(x), -1))
    if cfg.need_readings:
        need = target - banked_after(x, target)
        parts += [need / np.float32(1000.0), need >= cfg.point_levels()[None, :]]
    return np.concatenate([p.astype(np.float32) for p in parts], axis=1)


def banked_after(x: np.ndarray, target: np.float32) -> np.ndarray:
    """``(B, 1)`` my banked score after banking now: my score plus the turn total on my turn."""
    turn = x[:, I_MY_TURN : I_MY_TURN + 1] * x[:, I_TURN_TOTAL : I_TURN_TOTAL + 1] * target
    return (x[:, I_SCORE : I_SCORE + 1] * target + turn).astype(np.float32)


def margin_points(x: np.ndarray, target: np.float32) -> np.ndarray:
    """``(B, 1)`` margin after banking in points: my score, plus the turn total when it is my
    turn, less the best banked score of the other seats present (0 in a one-seat game)."""
    scores = x[:, I_SCORE : I_SCORE + MAX_SEATS] * target
    present = x[:, I_PRESENT + 1 : I_PRESENT + MAX_SEATS] > 0.5
    others = np.where(present, scores[:, 1:], -np.inf).max(axis=1, keepdims=True)
    others = np.where(np.isfinite(others), others, 0.0)
    return (banked_after(x, target) - others).astype(np.float32)


def action_features(rules: Rules) -> np.ndarray:
    """A fixed description of every action id, one row per id.

    Order-free rules, shape ``(n_actions, 2 + 2 * num_dice)``: row of a keep ``[1, points / 1000,
    one-hot of the dice kept, points / 1000 at that one-hot]``, where the points are the keep's
    own reading (order-free rules score a multiset of faces the same in every position);
    non-keep moves get a zero row.

    Carry-over (tap-order) rules, where a keep's points depend on what is working, shape
    ``(n_actions, 1 + 7 * num_dice + 4)`` (:func:`keep_parts`): row of a keep ``[1, per face
    a thermometer of the dice of that face kept (count >= k, k = 1 .. num_dice), one-hot of the
    dice kept, one-hot of the reading (plain, three pairs first, small straight first, large
    straight)]``; non-keep moves get a zero row. Such a keep's score is close to a sum over its
    faces given the working sets, which the network reads from the observation, so the shared
    term of the head scores a keep by its parts: one weight per (face, count) and per dice count
    for the position, shared by the thousands of keeps made of them.

    The structured policy head scores actions partly through these rows, so a rarely seen keep
    inherits what was learnt about keeps of the same size and points (or the same parts).

    >>> from greed_env.rules import preset
    >>> phi = action_features(preset("ten_thousand"))
    >>> cat = ActionCatalog("ten_thousand")
    >>> phi[cat.labels.index("keep 1,1,1,1,1")][:3].tolist()
    [1.0, 4.0, 0.0]
    >>> phi = action_features(preset("progressive"))
    >>> phi.shape[1], phi[ActionCatalog("progressive").labels.index("keep 1,5,5")][:4].tolist()
    (61, [1.0, 1.0, 0.0, 0.0])
    """
    catalog = ActionCatalog(rules)
    nd = rules.num_dice
    if rules.carry_over:
        return keep_parts(catalog, nd)
    out = np.zeros((catalog.n, 2 + 2 * nd), dtype=np.float32)
    for entry in catalog.entries:
        if entry.kind != "keep":
            continue
        score = None
        for fresh in (False, True):
            try:
                score = read_keep(rules, entry.dice, fresh=fresh).score
                break
            except IllegalKeep:
                continue
        if score is None:
            continue
        k = len(entry.dice)
        out[entry.index, 0] = 1.0
        out[entry.index, 1] = score / 1000.0
        out[entry.index, 1 + k] = 1.0
        out[entry.index, 1 + nd + k] = score / 1000.0
    return out


READINGS = ("", "pairs", "small", "large")
"""The catalog's keep readings, in the order of their one-hot in :func:`keep_parts`."""


def keep_parts(catalog: ActionCatalog, num_dice: int) -> np.ndarray:
    """The parts description of every keep (see :func:`action_features`, carry-over rules)."""
    nd = num_dice
    out = np.zeros((catalog.n, 1 + 7 * nd + len(READINGS)), dtype=np.float32)
    for entry in catalog.entries:
        if entry.kind != "keep":
            continue
        row = out[entry.index]
        row[0] = 1.0
        for face in range(1, 7):
            row[1 + (face - 1) * nd : 1 + (face - 1) * nd + entry.dice.count(face)] = 1.0
        row[1 + 6 * nd + len(entry.dice) - 1] = 1.0
        row[1 + 7 * nd + READINGS.index(entry.reading)] = 1.0
    return out
