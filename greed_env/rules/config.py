"""Frozen, typed rules configuration and the named presets.

Every rule book in the seed texts is a preset; every point where a text is silent or
ambiguous is a named field whose docstring quotes the sentence it comes from. A preset
with overrides is made with :func:`preset`; a configuration is validated when built, and
an unknown preset, an unknown field or a value out of range raises :class:`RulesError`
naming the field and what is allowed.

>>> r = preset("ten_thousand")
>>> r.entry_threshold, r.final_round, r.num_dice
(1000, True, 6)
>>> preset("ten_thousand", single_values=(100, 0, 0, 0, 50, 60)).single_values[5]
60
>>> preset("yahtzee")
Traceback (most recent call last):
...
greed_env.rules.config.RulesError: unknown rules preset 'yahtzee'; known presets: farkle, farkle5, greed, progressive, ten_thousand, trippn, zilch
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = [
    "PRESETS",
    "Rules",
    "RulesError",
    "parse_sets",
    "preset",
    "preset_names",
    "resolve_rules",
    "rules_from_args",
]

FACES = (1, 2, 3, 4, 5, 6)
SET_GROWTHS = ("none", "additive", "doubling", "fixed")
ENTRY_SCOPES = ("turn", "roll")
FIRST_PLAYER = ("roll", "seat0")
TIE_RULES = ("shared", "split_vote", "first_finisher")
MAX_TARGET = 1_000_000_000
"""Largest target: far past any rule book (10,000), large enough to model play that never
reaches the target (one player's long-run points per turn), small enough that every score
stays an exact 64-bit integer in tables, observations and the vector engine."""


class RulesError(ValueError):
    """A rules configuration that cannot be built: unknown preset or field, bad value."""


def _doc(text: str) -> dict[str, str]:
    return {"doc": text}


@dataclass(frozen=True, eq=True)
class Rules:
    """One complete rule set of the 10,000 dice-game family.

    All point values are in points; faces are 1..6. Tuples indexed by face hold the value for
    face 1 at index 0. A value of 0 switches a combination off.
    """

    name: str = field(default="custom", metadata=_doc("Preset name, or 'custom'."))

    # --- dice and goal -----------------------------------------------------------------
    num_dice: int = field(
        default=6,
        metadata=_doc(
            "Dice per full roll. Seeds: six (000, 001), eight (002 'Eight dice.'), "
            "five or six (003 'Equipment: 5 [or 6 dice]')."
        ),
    )
    target: int = field(
        default=10_000,
        metadata=_doc(
            "Points that end the game (a multiple of 50, at most 1,000,000,000). 0: no target, "
            "only with a fixed number of rounds (rounds > 0), where the game ends after the "
            "last round alone."
        ),
    )
    exact_target: bool = field(
        default=False,
        metadata=_doc(
            "002: 'Reach exactly 10,000 to go out — not more.' When set, banking is allowed only "
            "below the target, a keep that takes banked+unbanked past it ends the turn like a "
            "bust ('Going over is unrecoverable'), and landing on it exactly forces a roll for "
            "nothing."
        ),
    )
    final_round: bool = field(
        default=False,
        metadata=_doc(
            "001: 'Then, everyone else gets one more turn to try to beat that score.' 000 makes it "
            "optional: 'Alternatively, you can allow all other players an additional turn'. "
            "In exact-target games the others get one more turn to go out too (002)."
        ),
    )

    rounds: int = field(
        default=0,
        metadata=_doc(
            "A fixed number of rounds (0: none). 001: 'Before the game begins, decide how many "
            "rounds or points you want to play ... you can also set a lower or higher target or "
            "a fixed number of rounds', and 'The game ends when one player reaches or exceeds "
            "the target score of 10,000 points (or the agreed number of rounds)... The winner is "
            "the player with the highest score after everyone has had a final turn.' With N > 0 "
            "the game ends once every player has had N turns, and the highest banked score wins "
            "(a tie follows tie_rule: 'split_vote' sends the tied players to the vote, every other "
            "rule shares the pot). With a target too (target > 0) the game ends at whichever comes "
            "first: reaching the target ends it as without rounds (with the final_round, cut short "
            "if the rounds run out during it), else the end of round N. target = 0: only the "
            "rounds end the game."
        ),
    )

    final_round_past_rounds: bool = field(
        default=False,
        metadata=_doc(
            "A fixed number of rounds with a target and a final round: whether a final round "
            "begun in the last round is played to its end. 001: 'The game ends when one player "
            "reaches or exceeds the target score of 10,000 points (or the agreed number of "
            "rounds). However, each player gets one final chance to beat that score. The winner "
            "is the player with the highest score after everyone has had a final turn.' False "
            "(default): the last round ends the game, cutting the final round short (a player who "
            "reaches the target on the last turn of the last round leaves the earlier seats no "
            "answer). True: 'each player gets one final chance' wins over the rounds: the final "
            "round is played even past the last round. Only with rounds > 0, target > 0 and "
            "final_round."
        ),
    )

    # --- getting on the board ----------------------------------------------------------------
    entry_threshold: int = field(
        default=0,
        metadata=_doc(
            "Points needed to come in. 000: 'score 500 or more ... to \"come in\"'; 001: 'you must "
            "score at least 1,000 points on your first turn'; 003: 'Players must score 600 points "
            "in one turn before their score begins to count.'"
        ),
    )
    entry_scope: str = field(
        default="turn",
        metadata=_doc(
            "'turn': the turn total banked must reach the threshold; 'roll': one keep of the turn "
            "must score the threshold on its own. 000 says both 'on their initial roll' and 'If a "
            "score of 500 or more isn't achieved in the player's turn, they score no points for "
            "that turn'; 'turn' is the default."
        ),
    )
    entry_until_made: bool = field(
        default=True,
        metadata=_doc(
            "001 says 'on your first turn' / 'on your initial turn'. True (usual reading): the "
            "threshold applies until a player has come in. False: it applies to each player's "
            "first turn only; afterwards any amount banks."
        ),
    )
    min_bank: int = field(
        default=0,
        metadata=_doc("Minimum turn total to bank on every turn (Zilch: 300)."),
    )

    # --- scoring ---------------------------------------------------------------------------------
    single_values: tuple[int, ...] = field(
        default=(100, 0, 0, 0, 50, 0),
        metadata=_doc(
            "Points of a single die by face. All seeds: '1 = 100', '5 = 50'. 001 variant: "
            "'A single 6 is worth 60 points.'"
        ),
    )
    pair_values: tuple[int, ...] = field(
        default=(0, 0, 0, 0, 0, 0),
        metadata=_doc(
            "Points of a pair by face, as a combination. 001 variants: 'A pair of 1s is worth 200 "
            "points. A pair of 5s is worth 100 points.' (equal to two singles under the default "
            "single values)."
        ),
    )
    triple_values: tuple[int, ...] = field(
        default=(1000, 200, 300, 400, 500, 600),
        metadata=_doc(
            "Three of a kind by face. 000: '3 of a kind= 100 x the number on the dice (100 points "
            "for three 1's ...)'; 001/002: 'Three 1s are worth 1,000'; 003: 'Three 1s (in a single "
            "roll) = 1100'."
        ),
    )
    set_growth: str = field(
        default="doubling",
        metadata=_doc(
            "How a set grows past three dice. 'none' (003 lists no four-of-a-kind: extra dice score "
            "as singles if they can), 'doubling' (001: 'Four, five, or six of a kind are worth double "
            "... five 2s are worth 800 points, and six 2s are worth 1,600'), 'additive' (002: 'Each "
            "extra die added to a set scores that set's value again'), 'fixed' (000: '4 of a kind= "
            "1000 points', '5 of a kind= 2000', '6 of a kind= 3000', whatever the face: see "
            "fixed_set_values)."
        ),
    )
    fixed_set_values: tuple[int, ...] = field(
        default=(1000, 2000, 3000, 4000, 5000),
        metadata=_doc("For set_growth='fixed': value of 4, 5, 6, 7, 8 of a kind, any face."),
    )
    ones_set_values: tuple[int, ...] = field(
        default=(),
        metadata=_doc(
            "Optional table for four, five, six ... 1s overriding set_growth. 001 variant: 'Four 1s "
            "are worth 2,000 points. Five 1s are worth 4,000 points. Six 1s are worth 8,000 points.'"
        ),
    )
    straights: tuple[tuple[tuple[int, ...], int], ...] = field(
        default=(((1, 2, 3, 4, 5, 6), 1500),),
        metadata=_doc(
            "Straights as (faces, points). 000: 'A straight with all six dice ... = 2000'; 001: 'A "
            "straight of 1-2-3-4-5-6 is worth 1,500'; 002: 'Small straight (1-2-3-4-5 or 2-3-4-5-6) "
            "— 750 · Large straight (1-6) — 1,500'; 003: 'Straight (1 2 3 4 5 [6]) = 1500'. Partial "
            "straights are further entries."
        ),
    )
    straight_fill_bonus: int = field(
        default=0,
        metadata=_doc(
            "002: 'Filling a small straight made on an earlier keep — +500' (carry-over rules only)."
        ),
    )
    three_pairs: int = field(
        default=1500,
        metadata=_doc(
            "Three pairs in one keep. 000: 'three pairs (can only be achieved on a single roll)= "
            "1500'; 001: 'Three pairs of any number are worth 1,500'; 002: '1,100'."
        ),
    )
    three_pairs_sequential: int = field(
        default=0,
        metadata=_doc("002: 'or 1,500 if the pairs run in sequence'. 0: same as three_pairs."),
    )
    four_pairs: int = field(default=0, metadata=_doc("002: 'Four pairs — 1,750'."))
    four_pairs_sequential: int = field(
        default=0, metadata=_doc("002: 'or 2,000 if sequential'. 0: same as four_pairs.")
    )
    quad_counts_as_two_pairs: bool = field(
        default=False,
        metadata=_doc(
            "Whether four of a kind plus a pair reads as three pairs. 001 is silent ('Three pairs "
            "of any number'); default False reads 'three pairs' as three different faces. Zilch "
            "sets it: its published optimum (Busche 2010, 620.855 points a turn) counts 'three "
            "pairs, not necessarily unique'. Order-free rules only (refused with carry_over)."
        ),
    )
    four_kind_plus_pair: int = field(
        default=0, metadata=_doc("Variant combo: four of a kind and a pair in one keep (0: off).")
    )
    two_triplets: int = field(
        default=0, metadata=_doc("Variant combo: two different triples in one keep (0: off).")
    )
    repeat_sets: bool = field(
        default=True,
        metadata=_doc(
            "Whether one keep may read two sets of the same face (six 2s as two triples). 003 "
            "scores 'Three of a Kind (in a single roll)' and lists no larger set, so six 2s are "
            "one triple and three 2s that score nothing, six 1s 1,100 + 3 x 100: False, the "
            "farkle presets' reading and the meaning of set_growth='none' ('extra dice score as "
            "singles if they can'). True reads them as two triples (400; six 1s 2,200). Only "
            "decides anything where a set of six is worth less than two triples."
        ),
    )
    nothing_bonus: int = field(
        default=0,
        metadata=_doc(
            "Points for a full fresh roll in which no die scores; the player keeps them all and rolls "
            "a fresh full set (Zilch: 500). 0: such a roll is a bust."
        ),
    )
    all_dice_bonus: int = field(
        default=0,
        metadata=_doc(
            "002: 'All eight: roll eight dice and keep all eight as scoring dice — the score plus a "
            "1,000 bonus'."
        ),
    )
    six_kind_wins: bool = field(
        default=False,
        metadata=_doc(
            "001 variant: 'Rolling six of the same number in one roll is an instant win.' The roll "
            "itself wins: a throw of the dice showing six (or more) of one face ends the game at "
            "once with the roller the only winner, before any keep (in a roll-off and a roll for "
            "nothing too). Reading revision 2; revision 1 let it win only when the six dice were "
            "kept."
        ),
    )

    # --- within a turn ------------------------------------------------------------------------------
    hot_dice: bool = field(
        default=True,
        metadata=_doc(
            "When every die has been kept, roll a full set again. 003: 'If after one or more rolls, "
            "all the dice can be counted towards the score, the player can then choose to continue "
            "by rolling all the dice again'; 002: 'Keep all eight and you get a fresh set of eight'. "
            "000 is silent (default off there). Off: with no dice left the player must bank."
        ),
    )
    carry_over: bool = field(
        default=False,
        metadata=_doc(
            "002: sets, small straights and three pairs stay 'working' for the rest of the turn "
            "('Each extra die added to a set scores that set's value again', 'Filling a small "
            "straight made on an earlier keep'), and keeps are read in tap order ('The order you tap "
            "the dice decides how the roll is read'). See greed_env.rules.scoring for the algorithm."
        ),
    )
    working_set_claims: bool = field(
        default=True,
        metadata=_doc(
            "Whether a working set claims every tapped die of its face (tap-order rules). 002 "
            "says 'The order you tap the dice decides how the roll is read, so the same dice can "
            "pay differently' and 'A complete 1-6 inside one selection is always a large "
            "straight, whatever order you tap it in'; it names no other combination that takes a "
            "die whatever the order, and never says what a die of a face with a working set does "
            "when it could also complete a small straight or three pairs. True (default): the "
            "working set claims the die (it scores the set's value again) unless it completes a "
            "large straight; with 2s working, a 2 with 3,4,5,6 grows the set and 3,4,5,6 score "
            "nothing in every tap order. False: a die of a working face that completes a small "
            "straight or three pairs as it is tapped locks that combination instead, together "
            "with the pending dice and the dice of working faces tapped earlier in the keep "
            "(which then leave their sets' growth); tapped before the combination's last die it "
            "grows its set. With 2s working, 3,4,5,6,2 is the small straight 2-6 (750) and "
            "2,3,4,5,6 grows the set of 2s. carry_over rules only."
        ),
    )
    trippn: bool = field(
        default=False,
        metadata=_doc(
            "002 Trippn mode: 'Sets, unfilled straights and three-pairs survive an and-roll', and in "
            "a roll-off 'a player who gets sets of 2s, 3s, 4s and 6s all working at the same time "
            "wins the roll-off outright'."
        ),
    )
    reroll_all: bool = field(
        default=False,
        metadata=_doc(
            "000: 'Players can choose to reroll all six dice, losing their initial score in the hopes "
            "of scoring a higher one.' Instead of keeping, the player throws the turn's points away "
            "and rolls a full set."
        ),
    )
    reroll_all_any_time: bool = field(
        default=False,
        metadata=_doc(
            "000: 'Players can choose to reroll all six dice, losing their initial score in the "
            "hopes of scoring a higher one.' False (default): only the turn's first roll can be "
            "rerolled (its 'initial score'), once. True: after any roll of the turn, also after "
            "later keeps and after a reroll."
        ),
    )
    reroll_all_must_beat: bool = field(
        default=True,
        metadata=_doc(
            "000: 'if a higher score isn't achieved with the reroll, the player scores 0 for the "
            "turn'. The first keep after a reroll-all must score strictly more than the points given "
            "up (turn total plus the best keep of the abandoned roll); if the new roll has no such "
            "keep the turn scores 0. False: the reroll is a free retry."
        ),
    )
    voluntary_bust: bool = field(
        default=False,
        metadata=_doc(
            "002: 'Keep at least one scoring die or you bust and lose everything unbanked that "
            "turn.' When set, keeping nothing (busting on purpose) is a move. Never in a roll-off, "
            "where 'busting is the only way a turn ends' and a locked-in player 'could never bust'."
        ),
    )
    piggyback: bool = field(
        default=False,
        metadata=_doc(
            "003 variation: 'allowing players to take over from exactly where the previous player "
            "left off, including using their score. The next player could choose to begin a turn as "
            "normal or could begin by rolling the previous players remaining die (or dice).'"
        ),
    )

    piggyback_counts_for_entry: bool = field(
        default=True,
        metadata=_doc(
            "Whether points taken over by a piggyback count toward coming in. 003: 'Players must "
            "score 600 points in one turn before their score begins to count' and the variation "
            "'allowing players to take over from exactly where the previous player left off, "
            "including using their score'. True (default): the points taken over are part of the "
            "turn ('including using their score'), so 400 taken over and 200 rolled bank 600 and "
            "come in. False: only the points the player rolls in the turn count toward the "
            "threshold (they must 'score 600 points in one turn' themselves); the turn, once that "
            "is made, banks with the points taken over. Only with piggyback and an entry "
            "threshold of scope 'turn'."
        ),
    )

    # --- between turns -----------------------------------------------------------------------------------
    bust_penalty_after: int = field(
        default=0,
        metadata=_doc("Busts in a row that cost bust_penalty points (Zilch: 3). 0: no penalty."),
    )
    bust_penalty: int = field(default=0, metadata=_doc("Points lost on the N-th bust in a row."))
    first_player: str = field(
        default="roll",
        metadata=_doc(
            "'roll': 'each player rolls one die. The player with the highest number starts ... If "
            "there is a tie for the highest number, the tied players roll again' (000, 001, 003). "
            "'seat0': seat 0 starts (002 is silent)."
        ),
    )
    tie_rule: str = field(
        default="shared",
        metadata=_doc(
            "How a tie for the win ends. 'shared': the tied players share the pot. 'split_vote' "
            "(002): 'each is asked in turn whether to split the pot. A split needs everyone to agree "
            "— a single refusal sends it to a roll-off'. 'first_finisher' (001: 'everyone else gets "
            "one more turn to try to beat that score'): a tie does not beat, so among the tied "
            "players the one who reached the target first wins; a tie without them is shared."
        ),
    )
    min_players: int = field(default=1, metadata=_doc("Fewest seats (1 = solitaire)."))
    max_players: int = field(default=8, metadata=_doc("Most seats. 002: '1–8 players'."))
    horizon_rounds: int = field(
        default=400,
        metadata=_doc(
            "Rounds after which the game stops with the pot shared by every player, so that every "
            "game ends (no seed needs it; never reached under sensible play)."
        ),
    )
    rolloff_horizon: int = field(
        default=50,
        metadata=_doc("Roll-off rounds after which the tied players share the pot."),
    )

    # --------------------------------------------------------------------------------------------
    def __post_init__(self) -> None:
        _validate(self)
        key = json.dumps(_fingerprint_dict(self), sort_keys=True)
        object.__setattr__(self, "_fingerprint", hashlib.sha256(key.encode()).hexdigest()[:16])
        object.__setattr__(self, "_hash", hash(key))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rules):
            return NotImplemented
        return self._fingerprint == other._fingerprint  # type: ignore[attr-defined]

    @property
    def fingerprint(self) -> str:
        """A short hash of every field that changes play (the name excluded).

        Fields added after the first format count only when set away from their default, and
        corrected engine readings count through :func:`reading_revisions`.
        """
        return self._fingerprint  # type: ignore[attr-defined]

    def to_dict(self, include_name: bool = True) -> dict[str, Any]:
        """Plain JSON-able dict of the fields."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "name" and not include_name:
                continue
            out[f.name] = _jsonable(getattr(self, f.name))
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Inverse of :meth:`to_dict`; unknown keys raise :class:`RulesError`."""
        known = {f.name: f for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                raise RulesError(f"unknown rules field {key!r}; known fields: {', '.join(sorted(known))}")
            kwargs[key] = _coerce(key, value)
        return cls(**kwargs)

    def replace(self, **overrides: Any) -> Rules:
        """A copy with some fields changed (validated like a new configuration)."""
        known = {f.name for f in fields(self)}
        for key in overrides:
            if key not in known:
                raise RulesError(f"unknown rules field {key!r}; known fields: {', '.join(sorted(known))}")
        coerced = {k: _coerce(k, v) for k, v in overrides.items()}
        return dataclasses.replace(self, **coerced)

    @staticmethod
    def field_docs() -> dict[str, str]:
        """Field name -> the documentation string (with the seed quotation)."""
        return {f.name: f.metadata.get("doc", "") for f in fields(Rules)}

    # convenience derived values -------------------------------------------------------------
    def set_value(self, face: int, count: int) -> int:
        """Points of `count` (>= 3) dice of `face` read as one set, under set_growth."""
        base = self.triple_values[face - 1]
        if count < 3 or base <= 0:
            return 0
        if face == 1 and self.ones_set_values and count > 3:
            idx = count - 4
            if idx < len(self.ones_set_values):
                return self.ones_set_values[idx]
        if count == 3:
            return base
        growth = self.set_growth
        if growth == "none":
            return 0
        if growth == "additive":
            return base * (count - 2)
        if growth == "doubling":
            return base * (2 ** (count - 3))
        idx = count - 4
        return self.fixed_set_values[idx] if idx < len(self.fixed_set_values) else 0


# The fields that existed when fingerprints were first written (format 1). A field added later
# enters the fingerprint only when it is set away from its default, so rules that do not use it
# keep the fingerprint under which their tables and bots were made; a field whose default
# changes how some preset plays must come with a new reading revision below instead.
_FINGERPRINT_V1_FIELDS = frozenset(
    [
        "name", "num_dice", "target", "exact_target", "final_round", "entry_threshold", "entry_scope",
        "entry_until_made", "min_bank", "single_values", "pair_values", "triple_values", "set_growth",
        "fixed_set_values", "ones_set_values", "straights", "straight_fill_bonus", "three_pairs",
        "three_pairs_sequential", "four_pairs", "four_pairs_sequential", "quad_counts_as_two_pairs",
        "four_kind_plus_pair", "two_triplets", "nothing_bonus", "all_dice_bonus", "six_kind_wins",
        "hot_dice", "carry_over", "trippn", "reroll_all", "reroll_all_must_beat", "voluntary_bust",
        "piggyback", "bust_penalty_after", "bust_penalty", "first_player", "tie_rule", "min_players",
        "max_players", "horizon_rounds", "rolloff_horizon",
    ]
)


def reading_revisions(rules: Rules) -> dict[str, int]:
    """Engine readings that changed after format 1 and apply to `rules`, with their revision.

    The same field values can be played differently when the engine's reading of a rule is
    corrected; the revision enters the fingerprint so that tables and bots made under the old
    reading are refused, never silently used.
    """
    revisions: dict[str, int] = {}
    if rules.carry_over:
        revisions["tap_order"] = 2  # small straights and three pairs lock as they complete
    if rules.reroll_all and not rules.reroll_all_any_time:
        revisions["reroll_all"] = 2  # the turn's first roll only
    if rules.six_kind_wins:
        revisions["six_kind_wins"] = 2  # the roll itself wins, not the keep
    return revisions


def fingerprint_before_revisions(rules: Rules) -> str:
    """The fingerprint these field values had before any reading revision (format 1): lets a
    loader tell a card made under an earlier reading from an edited one."""
    data = _fingerprint_dict(rules)
    data.pop("_reading_revisions", None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _fingerprint_dict(rules: Rules) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(rules):
        if f.name == "name":
            continue
        value = getattr(rules, f.name)
        if f.name not in _FINGERPRINT_V1_FIELDS and value == f.default:
            continue
        out[f.name] = _jsonable(value)
    revisions = reading_revisions(rules)
    if revisions:
        out["_reading_revisions"] = revisions
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def _tupleize(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_tupleize(v) for v in value)
    return value


_FIELD_TYPES = {f.name: f.type for f in fields(Rules)}


def _coerce(key: str, value: Any) -> Any:
    """Turn JSON / command-line values into the field's type; reject what does not fit."""
    ftype = str(_FIELD_TYPES[key])
    if isinstance(value, str) and ftype != "str":
        import ast

        text = value.strip()
        low = text.lower()
        if ftype == "bool" and low in ("true", "false", "yes", "no", "1", "0", "on", "off"):
            return low in ("true", "yes", "1", "on")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError) as exc:
            raise RulesError(f"rules field {key!r}: cannot read value {value!r} ({ftype} expected)") from exc
    if ftype == "bool":
        if not isinstance(value, bool | int) or value not in (0, 1, True, False):
            raise RulesError(f"rules field {key!r}: expected true/false, got {value!r}")
        return bool(value)
    if ftype == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise RulesError(f"rules field {key!r}: expected an integer, got {value!r}")
        return value
    if ftype == "str":
        if not isinstance(value, str):
            raise RulesError(f"rules field {key!r}: expected a string, got {value!r}")
        return value
    return _tupleize(value)


def _check(cond: bool, key: str, allowed: str, value: Any) -> None:
    if not cond:
        raise RulesError(f"rules field {key!r} = {value!r} is out of range; allowed: {allowed}")


def _validate(r: Rules) -> None:
    """Refuse a configuration no game can be played by (:class:`RulesError` naming the field):
    each field in its range, then the fields that only make sense together."""
    _check_game(r)
    _check_scoring(r)
    _check_turns_and_seats(r)
    _check_combinations(r)


def _check_game(r: Rules) -> None:
    """The dice, the target, the rounds, coming in and banking."""
    _check(isinstance(r.num_dice, int) and 1 <= r.num_dice <= 8, "num_dice", "1..8", r.num_dice)
    _check(
        isinstance(r.target, int)
        and (0 < r.target <= MAX_TARGET or (r.target == 0 and r.rounds > 0))
        and r.target % 50 == 0,
        "target",
        f"a positive multiple of 50 up to {MAX_TARGET:_} (0, no target, only with rounds > 0)",
        r.target,
    )
    _check(
        isinstance(r.rounds, int) and 0 <= r.rounds <= r.horizon_rounds,
        "rounds",
        "0 (no fixed number) or 1..horizon_rounds",
        r.rounds,
    )
    _check(not (r.exact_target and r.target == 0), "exact_target", "only with a target > 0", r.exact_target)
    _check(
        r.entry_threshold >= 0 and (r.entry_threshold <= r.target or r.target == 0),
        "entry_threshold",
        "0..target",
        r.entry_threshold,
    )
    _check(r.entry_scope in ENTRY_SCOPES, "entry_scope", " | ".join(ENTRY_SCOPES), r.entry_scope)
    _check(  # a bank above the target would win nothing the target does not, or (exact) never
        r.min_bank >= 0 and (r.min_bank <= r.target or r.target == 0),
        "min_bank",
        "0..target (a turn that must bank more than the target: no game would end with a winner)",
        r.min_bank,
    )


def _check_scoring(r: Rules) -> None:
    """The scoring tables: per-face values, set growth, straights, combinations, bonuses."""
    for key in ("single_values", "pair_values", "triple_values"):
        v = getattr(r, key)
        _check(
            isinstance(v, tuple) and len(v) == 6 and all(isinstance(x, int) and x >= 0 for x in v),
            key,
            "six non-negative integers, one per face 1..6",
            v,
        )
    _check(r.set_growth in SET_GROWTHS, "set_growth", " | ".join(SET_GROWTHS), r.set_growth)
    _check(
        all(isinstance(x, int) and x >= 0 for x in r.fixed_set_values),
        "fixed_set_values",
        "non-negative integers for 4, 5, 6, ... of a kind",
        r.fixed_set_values,
    )
    _check(
        all(isinstance(x, int) and x >= 0 for x in r.ones_set_values),
        "ones_set_values",
        "non-negative integers for four, five, six ... 1s",
        r.ones_set_values,
    )
    for entry in r.straights:
        ok = (
            isinstance(entry, tuple)
            and len(entry) == 2
            and isinstance(entry[0], tuple)
            and len(entry[0]) >= 2
            and len(set(entry[0])) == len(entry[0])
            and all(f in FACES for f in entry[0])
            and isinstance(entry[1], int)
            and entry[1] > 0
            and len(entry[0]) <= r.num_dice
        )
        _check(ok, "straights", "pairs (distinct faces fitting in num_dice, positive points)", entry)
    for key in (
        "straight_fill_bonus",
        "three_pairs",
        "three_pairs_sequential",
        "four_pairs",
        "four_pairs_sequential",
        "four_kind_plus_pair",
        "two_triplets",
        "nothing_bonus",
        "all_dice_bonus",
        "bust_penalty",
        "bust_penalty_after",
    ):
        v = getattr(r, key)
        _check(isinstance(v, int) and v >= 0, key, "an integer >= 0", v)
    for key in ("single_values", "pair_values", "triple_values"):
        _check(
            all(x % 50 == 0 for x in getattr(r, key)) or key == "single_values",
            key,
            "multiples of 50",
            getattr(r, key),
        )


def _check_turns_and_seats(r: Rules) -> None:
    """Bust penalties, who starts, ties, the number of players and the horizons."""
    _check(
        not (r.bust_penalty and not r.bust_penalty_after),
        "bust_penalty_after",
        ">= 1 when bust_penalty is set (the penalty falls on that many busts in a row)",
        r.bust_penalty_after,
    )
    _check(
        r.first_player in FIRST_PLAYER, "first_player", " | ".join(FIRST_PLAYER), r.first_player
    )
    _check(r.tie_rule in TIE_RULES, "tie_rule", " | ".join(TIE_RULES), r.tie_rule)
    _check(
        1 <= r.min_players <= r.max_players <= 8,
        "min_players/max_players",
        "1 <= min_players <= max_players <= 8",
        (r.min_players, r.max_players),
    )
    _check(r.horizon_rounds >= 1, "horizon_rounds", ">= 1", r.horizon_rounds)
    _check(r.rolloff_horizon >= 1, "rolloff_horizon", ">= 1", r.rolloff_horizon)


def _check_combinations(r: Rules) -> None:
    """Fields that need others: a rule that only exists alongside another one."""
    _check(not (r.trippn and not r.carry_over), "trippn", "only with carry_over=True", r.trippn)
    _check(
        not (r.tie_rule == "split_vote" and not r.exact_target),
        "tie_rule",
        "'split_vote' only with exact_target=True (ties arise among players who went out)",
        r.tie_rule,
    )
    _check(
        not (r.nothing_bonus and not r.hot_dice),
        "nothing_bonus",
        "only with hot_dice=True (the bonus comes with a free roll of a full set)",
        r.nothing_bonus,
    )
    _check(
        not (r.exact_target and r.entry_threshold >= r.target),
        "entry_threshold",
        "below target",
        r.entry_threshold,
    )
    if r.carry_over:
        for key in ("quad_counts_as_two_pairs", "four_kind_plus_pair", "two_triplets"):
            if getattr(r, key):
                raise RulesError(
                    f"rules field {key!r} = {getattr(r, key)!r} cannot be honoured with "
                    "carry_over=True: tap-order keeps lock sets as they complete, so a four of a "
                    "kind or a triple is never read as part of a larger combination"
                )
    elif r.straight_fill_bonus:
        raise RulesError(
            f"rules field 'straight_fill_bonus' = {r.straight_fill_bonus!r} needs "
            "carry_over=True: only tap-order rules keep a small straight working to be filled"
        )
    if not r.working_set_claims and not r.carry_over:
        raise RulesError(
            "rules field 'working_set_claims' = False needs carry_over=True: only tap-order rules "
            "keep sets working from one keep to the next"
        )
    if r.final_round_past_rounds and not (r.rounds and r.target and r.final_round):
        raise RulesError(
            "rules field 'final_round_past_rounds' = True needs rounds > 0, target > 0 and "
            "final_round=True: it plays a final round begun in the last round to its end"
        )
    if not r.piggyback_counts_for_entry and not (
        r.piggyback and r.entry_threshold and r.entry_scope == "turn"
    ):
        raise RulesError(
            "rules field 'piggyback_counts_for_entry' = False needs piggyback=True and an entry "
            "threshold of entry_scope='turn': it says whether points taken over count toward it"
        )
    if r.reroll_all_any_time and not r.reroll_all:
        raise RulesError("rules field 'reroll_all_any_time' = True needs reroll_all=True")
    if r.tie_rule == "first_finisher" and not (r.final_round or r.exact_target):
        raise RulesError(
            "rules field 'tie_rule' = 'first_finisher' needs final_round=True or "
            "exact_target=True: otherwise the first to reach the target wins and no tie arises"
        )


# ----------------------------------------------------------------------------------------------
# presets

_GREED = Rules(
    name="greed",
    num_dice=6,
    entry_threshold=500,
    entry_scope="turn",
    single_values=(100, 0, 0, 0, 50, 0),
    triple_values=(100, 200, 300, 400, 500, 600),
    set_growth="fixed",
    fixed_set_values=(1000, 2000, 3000),
    straights=(((1, 2, 3, 4, 5, 6), 2000),),
    three_pairs=1500,
    hot_dice=False,
    reroll_all=True,
    reroll_all_must_beat=True,
    final_round=False,
    min_players=2,
)

_TEN_THOUSAND = Rules(
    name="ten_thousand",
    num_dice=6,
    entry_threshold=1000,
    entry_until_made=True,
    triple_values=(1000, 200, 300, 400, 500, 600),
    set_growth="doubling",
    straights=(((1, 2, 3, 4, 5, 6), 1500),),
    three_pairs=1500,
    hot_dice=True,
    final_round=True,
    min_players=2,
)

_PROGRESSIVE = Rules(
    name="progressive",
    num_dice=8,
    exact_target=True,
    final_round=True,
    triple_values=(1000, 200, 300, 400, 500, 600),
    set_growth="additive",
    straights=(((1, 2, 3, 4, 5), 750), ((2, 3, 4, 5, 6), 750), ((1, 2, 3, 4, 5, 6), 1500)),
    straight_fill_bonus=500,
    three_pairs=1100,
    three_pairs_sequential=1500,
    four_pairs=1750,
    four_pairs_sequential=2000,
    all_dice_bonus=1000,
    hot_dice=True,
    carry_over=True,
    voluntary_bust=True,
    first_player="seat0",
    tie_rule="split_vote",
    min_players=1,
)

_FARKLE = Rules(
    name="farkle",
    num_dice=6,
    entry_threshold=600,
    triple_values=(1100, 200, 300, 400, 500, 600),
    set_growth="none",
    repeat_sets=False,
    straights=(((1, 2, 3, 4, 5, 6), 1500),),
    three_pairs=0,
    hot_dice=True,
    final_round=False,
    min_players=2,
)

_ZILCH = Rules(
    name="zilch",
    num_dice=6,
    min_bank=300,
    triple_values=(1000, 200, 300, 400, 500, 600),
    set_growth="doubling",
    straights=(((1, 2, 3, 4, 5, 6), 1500),),
    three_pairs=1500,
    quad_counts_as_two_pairs=True,
    nothing_bonus=500,
    bust_penalty_after=3,
    bust_penalty=500,
    hot_dice=True,
    final_round=False,
    min_players=2,
)

PRESETS: dict[str, Rules] = {
    "greed": _GREED,
    "ten_thousand": _TEN_THOUSAND,
    "progressive": _PROGRESSIVE,
    "trippn": _PROGRESSIVE.replace(name="trippn", trippn=True),
    "farkle": _FARKLE,
    "farkle5": _FARKLE.replace(
        name="farkle5", num_dice=5, straights=(((1, 2, 3, 4, 5), 1500),)
    ),
    "zilch": _ZILCH,
}

PRESET_SOURCES: dict[str, str] = {
    "greed": "seed 000 'Greed'",
    "ten_thousand": "seed 001 '10,000'",
    "progressive": "seed 002 'Progressive 10,000'",
    "trippn": "seed 002 'Progressive 10,000', Trippn mode",
    "farkle": "seed 003 'Farkle 10000', six dice",
    "farkle5": "seed 003 'Farkle 10000', five dice",
    "zilch": "online variant summarised in RULES-NOTES.md (not a seed)",
}


def preset_names() -> list[str]:
    """Names of the built-in presets, sorted."""
    return sorted(PRESETS)


def preset(name: str, /, **overrides: Any) -> Rules:
    """The named preset (case and surrounding spaces ignored, as bot names are), with
    `overrides` applied (each validated).

    Raises:
        RulesError: unknown preset name, unknown field, or a value out of range.
    """
    try:
        base = PRESETS[name.strip().lower() if isinstance(name, str) else name]
    except (KeyError, TypeError):
        raise RulesError(
            f"unknown rules preset {name!r}; known presets: {', '.join(preset_names())}"
        ) from None
    if not overrides:
        return base
    return base.replace(**overrides)


def resolve_rules(rules: Rules | str | None, **overrides: Any) -> Rules:
    """Accept a preset name, a :class:`Rules`, or None (ten_thousand), plus overrides."""
    if rules is None:
        rules = "ten_thousand"
    if isinstance(rules, str):
        return preset(rules, **overrides)
    if isinstance(rules, Rules):
        return rules.replace(**overrides) if overrides else rules
    raise RulesError(f"rules must be a preset name or a Rules object, got {type(rules).__name__}")

def parse_sets(items: Sequence[str] | None) -> dict[str, str]:
    """``--set`` items ``["FIELD=VALUE", ...]`` -> ``{FIELD: VALUE}`` (the rules parse the values).

    >>> parse_sets(["target=3000", " entry_threshold = 500"])
    {'target': '3000', 'entry_threshold': '500'}

    Raises:
        ValueError: an item without ``=`` or without a field name, or a string in place of a
            list of items.
    """
    if isinstance(items, str):
        raise ValueError(f"--set takes one FIELD=VALUE per flag, got the string {items!r}")
    out: dict[str, str] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--set expects FIELD=VALUE, got {item!r}")
        out[name.strip()] = value.strip()
    return out


_FIELD_IN_MESSAGE = re.compile(r"rules field '(\w+)'")


def rules_from_args(base: str | Rules, sets: Sequence[str] | None = ()) -> Rules:
    """The preset ``base`` (or the rules given) with the ``--set FIELD=VALUE`` overrides: how
    every ``greed`` command and training script reads its ``--rules`` and ``--set``.

    >>> rules_from_args("ten_thousand", ["target=3000", "entry_threshold=500"]).target
    3000

    Raises:
        RulesError: an unknown preset or field, a bad value, an item without ``=``, ``name``
            (the rule book's name is no rule: ``--rules`` picks the book); when an override
            breaks a field the user did not set (``--set num_dice=1`` leaves a six-dice
            straight), the message names the ``--set`` and the field it conflicts with.
    """
    try:
        overrides = parse_sets(sets)
    except ValueError as exc:
        raise RulesError(str(exc)) from None
    if "name" in overrides:
        raise RulesError(
            f"--set name={overrides['name']}: the name is not a rule to change; pick the rule book by its "
            f"preset name ({', '.join(preset_names())}) and change its fields with --set"
        )
    try:
        return preset(base, **overrides) if isinstance(base, str) else base.replace(**overrides)
    except RulesError as exc:
        raise RulesError(_conflict(base, overrides, str(exc))) from None


def _conflict(base: str | Rules, overrides: dict[str, str], message: str) -> str:
    """``message`` led by the ``--set`` at fault when it names a field the user did not set."""
    found = _FIELD_IN_MESSAGE.search(message)
    if not overrides or found is None or found.group(1) in overrides:
        return message
    field_name = found.group(1)
    rules = base if isinstance(base, Rules) else PRESETS.get(base.strip().lower())
    given = " ".join(f"--set {k}={v}" for k, v in overrides.items())
    where = f"{rules.name}'s {field_name}" if rules is not None else field_name
    return (f"{given} conflicts with {where}, which you did not set: {message}; "
            f"change it too with --set {field_name}=...")
