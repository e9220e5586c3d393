"""hack/bench_dispatch.py's seeded stockout traces, and Google's advice as a noisy forecast of them.

**Two populations** (``POPULATIONS``), replayed side by side and reported apart, because Google answers them apart:
``tpu`` jobs, a ``ct6e-standard-4t`` slice of 4 VMs, for which ``advice.capacity`` shows nothing ("When you send a
request to the advice.capacity API, you can't view the availability of TPUs",
https://cloud.google.com/compute/docs/instances/view-vm-availability, Limitations), so the keeper asks nothing and the
pair's advice is ``planb.regions.dispatcher.google_advice.no_tpu_advice`` (by design, no failure); and ``gpu``
jobs, two ``a3-highgpu-8g`` VMs, for which Google's advice is given in every region. Each population has its own pairs
(its machine type's capacity is its own), its own Spot uptimes and its own Poisson stream of ``--jobs`` jobs
(``--interarrival``).

**The trace** (``Trace``, all of it from ``--seed``). Regions ``REGIONS`` by rungs ``--rungs`` (each region's ladder
in that order), per population. Time runs in 10-minute slots. Each pair (region, rung, shape) has a true grant
probability per slot, ``p = sigmoid(base + 1.0 * sin(2 pi t / 24 h + phase) + walk)``: ``base`` drawn per pair from
its rung's range (``RUNG_MODELS``), a daily swing, and a slow random walk (``walk = 0.98 * walk + N(0, 0.15)`` a
slot). Whether the pair has capacity in a slot is a persistent coin: it keeps the last slot's state with probability
0.8, else draws anew with ``p``, so stockouts come in episodes of one to two hours and the pair has capacity about a
``p`` share of the time. A grant takes the pair's mean delay (drawn per pair from its rung's range, swinging by
``exp(0.4 sin)`` over the day) times a per-job jitter (``exp(N(0, 0.35))``). A request asked at ``t``: in a slot
with capacity, granted after the delay; in a stockout, a DWS request queues (granted once a slot has capacity, plus
the delay) and any other fails after its rung's ``fail_s`` (a reservation's quota already used, a Spot scale-up
refused). Today's ladder asks a failed pair again no sooner than ``RETRY_S`` (5 min) later; the policy waits its
``OfferPlan.retry_after_s``. One pair per population is set, not drawn: the last region's reservation never has
capacity. Spot's true mean uptime is drawn per region and population (log-uniform, 20 min to 6 h). Jobs carry a
checkpoint interval (10, 20, 30 or 60 min) and a restore time (2 to 8 min). Jobs do not compete for capacity (a
simplification). A reservation's room is read (``Trace.room``, Compute Engine's ``reservations.get``, which Google
answers for TPU and GPU reservations alike) unless ``--reservations unread``.

**Google's advice for the GPU jobs, the noise model** (``--advice-model``). ``stale``, the default and the model
BENCHMARKS.md's table reports: for each job and pair, ``obtainability = sigmoid(logit(p at t - 30 min) + N(0,
0.75))``, the true probability half an hour stale, with fresh noise on the logit at each call. ``realtime``, what
Google's page describes (https://cloud.google.com/compute/docs/instances/view-vm-availability: the score is based on
"real-time availability"; the page's zh-CN copy names the success rate of recent creation requests beside it):
``sigmoid(logit(0.5 * has capacity now + 0.5 * share of the last hour with capacity) + N(0, 0.75))``, the two inputs
the page names, weighed equally because it gives no weights, for every rung (the page speaks of Spot only). Either
way Spot's ``estimatedUptime`` is the true uptime times ``exp(N(0, 0.3))``, and with probability ``--advice-outage``
a job's calls all fail (no advice for any pair, and no reservation read: the outage is Compute Engine's; a GPU job
then races, a TPU job is ordered by the ledger alone).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from planb.regions.dispatcher import offer_order as ao
from planb.regions.dispatcher.google_advice import no_tpu_advice
from planb.regions.dispatcher.ledger import Key, shape_parts
from planb.regions.dispatcher.reservation_room import Room

REGIONS = ("us-east5", "europe-west4", "asia-northeast1")
#: Each population's shape (a pair's ``Key.shape``: machine type and VMs): the module's docstring.
SHAPES = {"tpu": "ct6e-standard-4t:4", "gpu": "a3-highgpu-8g:2"}
POPULATIONS = tuple(SHAPES)
SLOT_S, DAY_S = 600.0, 86400.0
PERSISTENCE = 0.8
RETRY_S = 300.0
ADVICE_LAG_S, ADVICE_NOISE, UPTIME_NOISE = 1800.0, 0.75, 0.3
#: The ``realtime`` model's "recent creation requests": the last hour's slots.
RECENT_SLOTS = 6
ADVICE_MODELS = ("stale", "realtime")


@dataclass(frozen=True)
class RungModel:
    p: tuple[float, float]
    delay_s: tuple[float, float]
    fail_s: float
    queues: bool


RUNG_MODELS = {
    "reservation": RungModel((0.3, 0.8), (30.0, 120.0), 20.0, False),
    "dws": RungModel((0.4, 0.9), (240.0, 1200.0), 0.0, True),
    "spot": RungModel((0.4, 0.9), (60.0, 240.0), 180.0, False),
    "on-demand": RungModel((0.2, 0.7), (60.0, 180.0), 120.0, False),
}


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


@dataclass(frozen=True)
class JobSpec:
    index: int
    t0: float
    checkpoint_s: float
    restore_s: float
    outage: bool
    population: str = "tpu"

    @property
    def needs(self) -> ao.Job:
        return ao.Job(self.checkpoint_s, self.restore_s)

    @property
    def shape(self) -> str:
        return SHAPES[self.population]


@dataclass
class PairTrace:
    key: Key
    model: RungModel
    p: list[float]
    up: list[bool]
    delay_s: list[float]
    uptime_s: float | None


class Trace:
    def __init__(
        self,
        seed: int,
        jobs: int,
        rungs: Sequence[str],
        interarrival_s: float,
        outage: float,
        advice_model: str = "stale",
        reads: bool = True,
        populations: Sequence[str] = POPULATIONS,
    ) -> None:
        """``jobs`` jobs of each population in ``populations``, each population's a Poisson stream of its own."""
        if advice_model not in ADVICE_MODELS:
            raise ValueError(f"advice model {advice_model!r}: one of {', '.join(ADVICE_MODELS)}")
        if unknown := [p for p in populations if p not in SHAPES]:
            raise ValueError(f"population {unknown[0]!r}: one of {', '.join(SHAPES)}")
        self.seed, self.advice_model, self.reads, rng = seed, advice_model, reads, random.Random(seed)
        drawn: list[tuple[float, str, float, float, bool]] = []
        for population in populations:
            t = 0.0
            for _ in range(jobs):
                t += rng.expovariate(1.0 / interarrival_s)
                ckpt, restore = rng.choice((600.0, 1200.0, 1800.0, 3600.0)), rng.uniform(120.0, 480.0)
                drawn.append((t, population, ckpt, restore, rng.random() < outage))
        drawn.sort()
        self.jobs = [JobSpec(i, t, c, r, o, p) for i, (t, p, c, r, o) in enumerate(drawn)]
        self.slots = int(((drawn[-1][0] if drawn else 0.0) + 3 * DAY_S) // SLOT_S) + 1
        self.pairs: dict[Key, PairTrace] = {}
        for population in populations:
            for region in REGIONS:
                uptime = math.exp(rng.uniform(math.log(1200.0), math.log(21600.0)))
                for rung in rungs:
                    key = Key(region, rung, SHAPES[population])
                    self.pairs[key] = self._pair(rng, key, uptime)

    def keys(self, job: JobSpec) -> list[Key]:
        """The pairs a job can be offered to: its shape's, each region's ladder in order."""
        return [key for key in self.pairs if key.shape == job.shape]

    def _pair(self, rng: random.Random, key: Key, uptime: float) -> PairTrace:
        model = RUNG_MODELS[key.rung]
        never = key.region == REGIONS[-1] and key.rung == "reservation"
        base, swing = (-9.0, 0.0) if never else (_logit(rng.uniform(*model.p)), 1.0)
        phase, delay_phase, mean_delay = (
            rng.uniform(0, 2 * math.pi),
            rng.uniform(0, 2 * math.pi),
            rng.uniform(*model.delay_s),
        )
        walk, up, ps, ups, delays = 0.0, rng.random() < _sigmoid(base), [], [], []
        for slot in range(self.slots):
            walk = 0.98 * walk + rng.gauss(0.0, 0.15) * swing
            day = 2 * math.pi * slot * SLOT_S / DAY_S
            p = _sigmoid(base + swing * math.sin(day + phase) + walk)
            up = up if rng.random() < PERSISTENCE else rng.random() < p
            ps.append(p)
            ups.append(up)
            delays.append(mean_delay * math.exp(0.4 * math.sin(day + delay_phase)))
        return PairTrace(key, model, ps, ups, delays, uptime if key.rung == "spot" else None)

    def _rng(self, job: JobSpec, key: Key, what: str) -> random.Random:
        return random.Random(f"{self.seed}:{job.index}:{key}:{what}")

    def _slot(self, at: float) -> int:
        return min(int(at // SLOT_S), self.slots - 1)

    def delay(self, job: JobSpec, key: Key, at: float) -> float:
        return self.pairs[key].delay_s[self._slot(at)] * math.exp(self._rng(job, key, "delay").gauss(0.0, 0.35))

    def next_up(self, key: Key, at: float) -> float:
        """The first moment at or after ``at`` the pair has capacity (inf: never within the trace)."""
        pair, slot = self.pairs[key], self._slot(at)
        if pair.up[slot]:
            return at
        later = next((s for s in range(slot + 1, self.slots) if pair.up[s]), None)
        return math.inf if later is None else later * SLOT_S

    def ask(self, job: JobSpec, key: Key, at: float) -> tuple[float, bool]:
        """When a request asked at ``at`` ends, and whether it is granted."""
        pair = self.pairs[key]
        if pair.up[self._slot(at)]:
            return at + self.delay(job, key, at), True
        if pair.model.queues:
            start = self.next_up(key, at)
            return start + self.delay(job, key, start), math.isfinite(start)
        return at + pair.model.fail_s, False

    def advice(self, job: JobSpec, key: Key) -> ao.Advice:
        """Google's advice for the pair as the keeper gets it: none by design for a TPU shape (not asked), else
        the noise model's (the module's docstring), or none when the job's calls all fail."""
        unasked = no_tpu_advice(key)
        if unasked is not None:
            return unasked
        if job.outage:
            return ao.Advice.absent("503 UNAVAILABLE")
        pair, rng = self.pairs[key], self._rng(job, key, "advice")
        if self.advice_model == "realtime":
            slot = self._slot(job.t0)
            recent = pair.up[max(0, slot - RECENT_SLOTS + 1) : slot + 1]
            mean = 0.5 * float(pair.up[slot]) + 0.5 * sum(recent) / len(recent)
        else:
            mean = pair.p[self._slot(max(0.0, job.t0 - ADVICE_LAG_S))]
        score = _sigmoid(_logit(mean) + rng.gauss(0.0, ADVICE_NOISE))
        uptime = None if pair.uptime_s is None else pair.uptime_s * math.exp(rng.gauss(0.0, UPTIME_NOISE))
        return ao.Advice(score, uptime)

    def room(self, job: JobSpec, key: Key, at: float | None = None) -> Room | None:
        """A reservation's room read at ``at`` (submission by default; Compute Engine's ``reservations.get``):
        whether the pair has capacity then, which for a reservation is its room (a reservation fails for want of
        room); None for the other rungs, for a job whose calls all fail (the outage is Compute Engine's, so the read
        fails with the advice), and with ``reads`` off."""
        if not self.reads or job.outage or key.rung != "reservation":
            return None
        _, count = shape_parts(key.shape)
        up = self.pairs[key].up[self._slot(job.t0 if at is None else at)]
        return Room(f"{key.region}-reservation", count if up else 0, count, "VMs")

    def full(self, job: JobSpec, at: float) -> list[Key]:
        """The reservation pairs read full at ``at``: what the policy's ``OfferPlan.due`` leaves unasked."""
        rooms = ((key, self.room(job, key, at)) for key in self.keys(job))
        return [key for key, room in rooms if room is not None and not room.fits]

    def short_spot(self, job: JobSpec, key: Key) -> bool:
        uptime = self.pairs[key].uptime_s
        return uptime is not None and uptime < job.checkpoint_s + job.restore_s
