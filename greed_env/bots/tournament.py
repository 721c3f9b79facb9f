"""Round-robin tournaments between bots: win rates with confidence intervals and Elo ratings.

``greed tournament --rules NAME --bots a,b,c --games N [--workers K] [--seed S] [--out DIR]``
calls :func:`run_tournament`. Every pair of bots plays ``N`` two-player games. Seats rotate:
in game ``g`` of a pair the first-listed bot sits in seat ``g % 2`` and seat 0 always starts,
so each bot starts half the games. Games ``2k`` and ``2k + 1`` of a pair roll from the same dice
stream (seats swapped), which lowers the variance of the comparison.

Determinism: the dice of game ``g`` of pair ``p`` come from
``SeedSequence(seed, spawn_key=(p, g // 2, 0))`` and each seat's bot generator from
``SeedSequence(seed, spawn_key=(p, g, 1 + seat))``, so results depend on ``seed`` and the bot
list only, never on the number of worker processes, on scheduling or on whether the chunks
of :data:`CHUNK` games ran as tasks of a Ray cluster (``address``).

Results: for each pair the score of each side (a win counts 1, a shared win 1/2) with a 95%
Wilson interval; per bot its overall score rate with its interval; Elo ratings fitted by
maximum likelihood under the Bradley-Terry model (:func:`fit_elo`), anchored at ``random`` =
1000 when ``random`` plays (else the first bot), with standard errors from the Fisher
information. :meth:`TournamentResult.write` saves ``standings.csv``, ``pairs.csv`` and
``tournament.md``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.bots.base import Bot
from greed_env.bots.loader import check_trusted, load
from greed_env.bots.play import play_game
from greed_env.bots.solver_backend import optimal_available
from greed_env.bots.spec import parse_spec
from greed_env.bots.workers import map_chunks
from greed_env.files import atomic_write_text
from greed_env.progress import CountBar
from greed_env.rules import Rules

__all__ = [
    "PairResult",
    "Standing",
    "TournamentResult",
    "default_opponents",
    "evaluate_bot",
    "fit_elo",
    "play_match",
    "run_tournament",
    "same_bot",
    "wilson_interval",
]

CHUNK = 20
Z95 = 1.959963984540054


def wilson_interval(score: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a rate ``score / n`` (draws may make ``score`` fractional).

    >>> [round(x, 3) for x in wilson_interval(50, 100)]
    [0.404, 0.596]
    >>> wilson_interval(0, 0)
    (0.0, 1.0)
    """
    if n <= 0:
        return (0.0, 1.0)
    p = score / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / denom
    lo = 0.0 if score <= 0 else max(0.0, centre - half)
    hi = 1.0 if score >= n else min(1.0, centre + half)
    return (lo, hi)


def fit_elo(
    names: Sequence[str],
    score: np.ndarray,
    games: np.ndarray,
    anchor: int = 0,
    anchor_elo: float = 1000.0,
    prior_draws: float = 1.0,
    tol: float = 1e-10,
    max_iter: int = 10_000,
) -> tuple[np.ndarray, np.ndarray]:
    """Elo ratings and their standard errors by maximum likelihood (Bradley-Terry).

    ``score[i, j]`` is what ``i`` scored against ``j`` (wins + draws / 2) in ``games[i, j]``
    games (symmetric). ``P(i beats j) = 1 / (1 + 10 ** ((elo_j - elo_i) / 400))``. Every pair
    that played gets ``prior_draws`` virtual drawn games, which keeps ratings finite when a bot
    won or lost every game. Fitted with Hunter's MM iteration, then shifted so that
    ``elo[anchor] == anchor_elo``. Standard errors come from the inverse Fisher information with
    the anchor fixed (the anchor's is 0).

    >>> s = np.array([[0, 75.0], [25.0, 0]]); g = np.array([[0, 100.0], [100.0, 0]])
    >>> elo, se = fit_elo(["a", "b"], s, g, anchor=1, prior_draws=0)
    >>> round(float(elo[0] - elo[1]), 1)
    190.8
    """
    k = len(names)
    g = np.asarray(games, dtype=float)
    w = np.asarray(score, dtype=float).copy()
    played = g > 0
    g = g + prior_draws * played
    w = w + 0.5 * prior_draws * played
    wins = w.sum(axis=1)
    gamma = np.ones(k)
    for _ in range(max_iter):
        denom = (g / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new = np.where(denom > 0, wins / np.where(denom > 0, denom, 1.0), gamma)
        new = np.maximum(new, 1e-300)
        new /= np.exp(np.mean(np.log(new)))
        if np.max(np.abs(np.log(new) - np.log(gamma))) < tol:
            gamma = new
            break
        gamma = new
    theta = np.log(gamma)
    theta -= theta[anchor]
    scale = 400.0 / math.log(10.0)
    elo = anchor_elo + scale * theta
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    info = -g * p * (1 - p)
    np.fill_diagonal(info, 0.0)
    np.fill_diagonal(info, -info.sum(axis=1))
    keep = [i for i in range(k) if i != anchor]
    se = np.zeros(k)
    if keep:
        sub = info[np.ix_(keep, keep)]
        cov = np.linalg.pinv(sub)
        se[keep] = scale * np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return elo, se


# ------------------------------------------------------------------------------------------
# games


@dataclass
class _Task:
    pair: int
    a: int
    b: int
    start: int
    stop: int


_WORKER: dict[str, Any] = {}


def _init_worker(rules_dict: dict[str, Any], specs: Sequence[str], seed: int) -> None:
    _WORKER["rules"] = Rules.from_dict(rules_dict)
    _WORKER["specs"] = list(specs)
    _WORKER["seed"] = seed
    _WORKER["bots"] = {}


def _bot(i: int) -> Bot:
    bots: dict[int, Bot] = _WORKER["bots"]
    if i not in bots:
        bots[i] = load(_WORKER["specs"][i], rules=_WORKER["rules"])
    return bots[i]


def _run_task(task: _Task) -> tuple[int, int, float, float, int]:
    """Play games ``start..stop-1`` of a pair; return (pair, start, a_score, b_score, draws)."""
    rules: Rules = _WORKER["rules"]
    seed: int = _WORKER["seed"]
    a_bot, b_bot = _bot(task.a), _bot(task.b)
    a_score = b_score = 0.0
    draws = 0
    for g in range(task.start, task.stop):
        a_seat = g % 2
        seats = [a_bot, b_bot] if a_seat == 0 else [b_bot, a_bot]
        dice = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(task.pair, g // 2, 0)))
        rngs = [
            np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(task.pair, g, 1 + k)))
            for k in range(2)
        ]
        shares = play_game(rules, seats, dice, rngs, first_player=0)
        a_share, b_share = shares[a_seat], shares[1 - a_seat]
        a_score += a_share
        b_score += b_share
        draws += int(0.0 < a_share < 1.0)
    return task.pair, task.start, a_score, b_score, draws


# ------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class PairResult:
    """One pairing: ``a`` and ``b`` played ``games`` games; scores count a shared win as 1/2."""

    a: str
    b: str
    games: int
    a_score: float
    b_score: float
    draws: int

    @property
    def a_wins(self) -> int:
        return round(self.a_score - self.draws / 2)

    @property
    def b_wins(self) -> int:
        return round(self.b_score - self.draws / 2)

    @property
    def a_rate(self) -> float:
        return self.a_score / self.games if self.games else 0.0

    def a_interval(self) -> tuple[float, float]:
        """95% Wilson interval of ``a``'s score rate."""
        return wilson_interval(self.a_score, self.games)


@dataclass(frozen=True)
class Standing:
    """One bot's line of the table."""

    bot: str
    games: int
    score: float
    wins: int
    draws: int
    losses: int
    rate: float
    ci_low: float
    ci_high: float
    elo: float
    elo_se: float


@dataclass
class TournamentResult:
    """Everything a tournament measured, with writers for Markdown and CSV."""

    rules: Rules
    bots: list[str]
    games_per_pair: int
    seed: int
    pairs: list[PairResult]
    anchor: str
    anchor_elo: float
    standings: list[Standing] = field(default_factory=list)
    specs: list[str] = field(default_factory=list)
    """The bot specs as given, in the order of :attr:`bots` (the names shown: the spec, or a
    ``py:`` bot's own name)."""

    def score_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """``(score[i, j], games[i, j])`` in the order of :attr:`bots`."""
        idx = {b: i for i, b in enumerate(self.bots)}
        k = len(self.bots)
        score = np.zeros((k, k))
        games = np.zeros((k, k))
        for p in self.pairs:
            i, j = idx[p.a], idx[p.b]
            score[i, j] += p.a_score
            score[j, i] += p.b_score
            games[i, j] += p.games
            games[j, i] += p.games
        return score, games

    def compute_standings(self) -> list[Standing]:
        """Fill and return :attr:`standings`, sorted by Elo (best first)."""
        score, games = self.score_matrix()
        anchor = self.bots.index(self.anchor)
        elo, se = fit_elo(self.bots, score, games, anchor=anchor, anchor_elo=self.anchor_elo)
        draws = dict.fromkeys(self.bots, 0)
        for p in self.pairs:
            draws[p.a] += p.draws
            draws[p.b] += p.draws
        rows = []
        for i, b in enumerate(self.bots):
            n = int(games[i].sum())
            s = float(score[i].sum())
            d = draws[b]
            wins = round(s - d / 2)
            lo, hi = wilson_interval(s, n)
            rows.append(
                Standing(b, n, s, wins, d, n - wins - d, s / n if n else 0.0, lo, hi, float(elo[i]), float(se[i]))
            )
        rows.sort(key=lambda r: -r.elo)
        self.standings = rows
        return rows

    def markdown(self) -> str:
        """The standings and the cross table as Markdown."""
        if not self.standings:
            self.compute_standings()
        lines = [
            f"# Tournament: {self.rules.name} (rules {self.rules.fingerprint})",
            "",
            f"{len(self.bots)} bots, {self.games_per_pair} games per pair, seed {self.seed}; "
            f"seats alternate, seat 0 starts. Elo: Bradley-Terry maximum likelihood, "
            f"{self.anchor} = {self.anchor_elo:g}; 95% intervals (Wilson for rates, ±1.96 SE for Elo).",
            "",
            "| rank | bot | Elo | ±95% | score rate | 95% CI | W | D | L | games |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r, s in enumerate(self.standings, 1):
            pm = "anchor" if s.bot == self.anchor else f"{Z95 * s.elo_se:.0f}"
            lines.append(
                f"| {r} | {s.bot} | {s.elo:.0f} | {pm} | {100 * s.rate:.1f}% | "
                f"{100 * s.ci_low:.1f}-{100 * s.ci_high:.1f}% | {s.wins} | {s.draws} | {s.losses} | {s.games} |"
            )
        lines += ["", "Score rate of the row bot against the column bot (95% CI):", ""]
        order = [s.bot for s in self.standings]
        lines.append("| | " + " | ".join(order) + " |")
        lines.append("|---" * (len(order) + 1) + "|")
        cell = self._cells()
        for a in order:
            row = [a] + ["-" if a == b else cell[(a, b)] for b in order]
            lines.append("| " + " | ".join(row) + " |")
        return "\n".join(lines) + "\n"

    def _cells(self) -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = {}
        for p in self.pairs:
            lo, hi = p.a_interval()
            out[(p.a, p.b)] = f"{100 * p.a_rate:.1f}% ({100 * lo:.0f}-{100 * hi:.0f})"
            b_lo, b_hi = 1 - hi, 1 - lo
            out[(p.b, p.a)] = f"{100 * (1 - p.a_rate):.1f}% ({100 * b_lo:.0f}-{100 * b_hi:.0f})"
        return out

    def standings_csv(self) -> str:
        """One row per bot: rank, bot, elo, elo_se, games, score, wins, draws, losses, rate, ci."""
        if not self.standings:
            self.compute_standings()
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["rank", "bot", "elo", "elo_se", "games", "score", "wins", "draws", "losses", "rate", "ci_low", "ci_high"])
        for r, s in enumerate(self.standings, 1):
            w.writerow([r, s.bot, f"{s.elo:.1f}", f"{s.elo_se:.1f}", s.games, f"{s.score:g}", s.wins, s.draws, s.losses, f"{s.rate:.4f}", f"{s.ci_low:.4f}", f"{s.ci_high:.4f}"])
        return buf.getvalue()

    def pairs_csv(self) -> str:
        """One row per pair: a, b, games, a_wins, draws, b_wins, a_score_rate, ci_low, ci_high."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["a", "b", "games", "a_wins", "draws", "b_wins", "a_score_rate", "ci_low", "ci_high"])
        for p in self.pairs:
            lo, hi = p.a_interval()
            w.writerow([p.a, p.b, p.games, p.a_wins, p.draws, p.b_wins, f"{p.a_rate:.4f}", f"{lo:.4f}", f"{hi:.4f}"])
        return buf.getvalue()

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write ``tournament.md``, ``standings.csv`` and ``pairs.csv`` (atomically) to ``out_dir``."""

        out = Path(out_dir)
        return [
            atomic_write_text(out / "tournament.md", self.markdown()),
            atomic_write_text(out / "standings.csv", self.standings_csv()),
            atomic_write_text(out / "pairs.csv", self.pairs_csv()),
        ]


# ------------------------------------------------------------------------------------------
# running




def _tasks(k: int, games: int) -> list[_Task]:
    out = []
    for p, (a, b) in enumerate(combinations(range(k), 2)):
        for start in range(0, games, CHUNK):
            out.append(_Task(p, a, b, start, min(games, start + CHUNK)))
    return out


def _execute(
    rules: Rules,
    specs: Sequence[str],
    tasks: Sequence[_Task],
    seed: int,
    workers: int,
    progress: bool,
    desc: str,
    address: str | None = None,
) -> list[tuple[int, int, float, float, int]]:
    bar = CountBar(desc, sum(t.stop - t.start for t in tasks), unit="game") if progress else None
    done = 0
    results = []
    init_args = (rules.to_dict(), list(specs), seed)
    sizes = {(t.pair, t.start): t.stop - t.start for t in tasks}
    try:
        for r in map_chunks(
            _run_task, tasks, workers=workers, address=address, initializer=_init_worker, initargs=init_args
        ):
            results.append(r)
            done += sizes[(r[0], r[1])]
            if bar is not None:
                bar.update_to(done)
    finally:
        if bar is not None:
            bar.close()
    results.sort(key=lambda r: (r[0], r[1]))
    return results


def run_tournament(
    rules: Rules,
    bots: Sequence[str],
    games: int,
    *,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    anchor: str | None = None,
    anchor_elo: float = 1000.0,
    trust_code: bool = True,
    address: str | None = None,
) -> TournamentResult:
    """Round robin of two-player games between the bots named by ``bots`` (registry specs).

    Args:
        rules: the rules every game is played under.
        bots: two or more distinct specs for :func:`greed_env.bots.load`.
        games: games per pair (seats alternate, see the module docstring).
        seed: root seed; results are a function of ``(rules, bots, games, seed)`` only.
        workers: processes (1: play in this process).
        progress: show a progress bar on stderr (:class:`greed_env.progress.CountBar`).
        anchor: bot whose Elo is fixed at ``anchor_elo`` (default ``random`` if playing, else
            the first bot).
        trust_code: False refuses specs whose bots run code as they load (an SB3 ``.zip``,
            ``py:``; :func:`greed_env.bots.loader.check_trusted`), as ``greed tournament`` does
            without ``--trust-code``.
        address: play the chunks as tasks of the Ray cluster there (``auto``,
            ``ray://HOST:PORT``, ``HOST:PORT``) instead of ``workers`` processes: the same
            results.

    Raises:
        ValueError: fewer than two bots, a repeated bot, ``games < 1``, an unknown anchor, or
            rules that do not allow two players.
        BotLoadError / LookupError: a spec does not load (checked before any game is played).
    """
    specs = [b.strip() for b in bots]
    if len(specs) < 2:
        raise ValueError("a tournament needs at least two bots")
    _check_distinct(specs)
    if games < 1:
        raise ValueError(f"games per pair must be >= 1, got {games}")
    if not rules.min_players <= 2 <= rules.max_players:
        raise ValueError(f"{rules.name} does not allow two-player games")
    for s in specs:
        check_trusted(s, trust_code)
    labels = _labels(specs, [load(s, rules=rules) for s in specs])
    if anchor is None:
        anchor = next((s for s in specs if _is_random(s)), specs[0])
    if anchor in specs:
        anchor = labels[specs.index(anchor)]
    if anchor not in labels:
        raise ValueError(f"anchor {anchor!r} is not one of the bots {specs}")
    tasks = _tasks(len(specs), games)
    raw = _execute(rules, specs, tasks, seed, workers, progress, f"{rules.name} round robin", address)
    pairs = _collect(labels, raw, games)
    result = TournamentResult(rules, labels, games, seed, pairs, anchor, anchor_elo, specs=specs)
    result.compute_standings()
    return result


def _is_random(spec: str) -> bool:
    return parse_spec(spec).kind == "random"


def _identity(spec: str) -> tuple[object, ...]:
    """What makes two specs the same bot: ``random`` and ``RANDOM``, ``threshold-300`` and
    ``threshold:300``, a heuristic with and without its listing's preset, one file by two paths."""
    p = parse_spec(spec)
    if p.kind == "random":
        return ("random",)
    if p.kind == "threshold":
        return ("threshold", p.bank_at, p.keep)
    if p.kind == "file":
        return ("file", str(Path(p.path).expanduser().resolve()))
    if p.kind == "python":
        return ("python", p.path, p.name)
    return (p.kind, p.preset, p.name.lower(), p.objective)


def same_bot(a: str, b: str) -> bool:
    """Whether the specs ``a`` and ``b`` name one bot (``threshold-300`` and ``threshold:300``).

    >>> same_bot("RANDOM", "farkle/random"), same_bot("threshold", "threshold-400")
    (True, False)
    """
    return _identity(a) == _identity(b)


def _check_distinct(specs: Sequence[str]) -> None:
    """Refuse two specs of one bot (a pair of copies measures nothing).

    Raises:
        ValueError: naming both specs.
    """
    seen: dict[tuple[object, ...], str] = {}
    for s in specs:
        key = _identity(s)
        if key in seen:
            raise ValueError(f"bots must be distinct: {seen[key]!r} and {s!r} name the same bot")
        seen[key] = s


def _labels(specs: Sequence[str], bots: Sequence[Bot]) -> list[str]:
    """The names the tables show: each spec, but a ``py:`` bot's own name (its spec is a module
    path), unless another bot shows that name."""
    names = [str(b.name) if parse_spec(s).kind == "python" else s for s, b in zip(specs, bots, strict=True)]
    return [n if names.count(n) == 1 else s for n, s in zip(names, specs, strict=True)]


def _collect(specs: Sequence[str], raw: Iterable[tuple[int, int, float, float, int]], games: int) -> list[PairResult]:
    acc: dict[int, list[float]] = {}
    for pair, _start, a_s, b_s, d in raw:
        cur = acc.setdefault(pair, [0.0, 0.0, 0.0])
        cur[0] += a_s
        cur[1] += b_s
        cur[2] += d
    out = []
    for p, (a, b) in enumerate(combinations(range(len(specs)), 2)):
        a_s, b_s, d = acc.get(p, [0.0, 0.0, 0.0])
        out.append(PairResult(specs[a], specs[b], games, a_s, b_s, int(d)))
    return out


def play_match(
    rules: Rules,
    a: str,
    b: str,
    games: int,
    *,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
) -> PairResult:
    """``games`` two-player games of ``a`` against ``b`` with alternating seats (as a tournament pair)."""
    specs = [a, b]
    raw = _execute(rules, specs, _tasks(2, games), seed, workers, progress, f"{a} vs {b}")
    return _collect(specs, raw, games)[0]


def default_opponents(rules: Rules) -> list[str]:
    """``random``, ``threshold-300`` and, where the solver handles the rules, ``optimal-duel``."""
    out = ["random", "threshold-300"]
    if optimal_available(rules, "duel"):
        out.append("optimal-duel")
    return out


def evaluate_bot(
    bot: str,
    rules: Rules,
    opponents: Sequence[str],
    games: int,
    *,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Play ``bot`` against each opponent; return JSON-able records for a bot card.

    Each record: ``opponent``, ``games``, ``wins``, ``draws``, ``losses``, ``score_rate``,
    ``ci95`` (Wilson), ``elo_diff`` (the Elo gap the score implies, clipped to +-1200),
    ``seed``, ``seating`` and the rules fingerprint.
    """
    records = []
    for i, opp in enumerate(opponents):
        r = play_match(rules, bot, opp, games, seed=seed + i, workers=workers, progress=progress)
        lo, hi = r.a_interval()
        rec = {
            "opponent": opp,
            "games": r.games,
            "wins": r.a_wins,
            "draws": r.draws,
            "losses": r.b_wins,
            "score_rate": round(r.a_rate, 4),
            "ci95": [round(lo, 4), round(hi, 4)],
            "elo_diff": round(_elo_gap(r.a_rate), 1),
            "seed": seed + i,
            "seating": "two players, seats alternate, seat 0 starts",
            "rules_fingerprint": rules.fingerprint,
        }
        records.append(rec)
        if on_result is not None:
            on_result(rec)
    return records


def _elo_gap(rate: float, cap: float = 1200.0) -> float:
    if rate <= 0.0:
        return -cap
    if rate >= 1.0:
        return cap
    return max(-cap, min(cap, 400.0 * math.log10(rate / (1.0 - rate))))
