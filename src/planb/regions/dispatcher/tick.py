"""The keeper's dispatcher: advice-ordered dispatch of the manager's Workloads as Kueue's External MultiKueue
dispatcher (``planb regions keep --dispatch``; what Kueue does and why: ``planb.regions.dispatcher.nomination``, the
policy: ``planb.regions.dispatcher.offer_order``).

Each keeper tick first reads (``planb.regions.dispatcher.reads``: the regions' ladders and copies, Google's advice and
the reservations' rooms that its decisions need), then decides over what it read, nothing read meanwhile
(``planb.regions.dispatcher.decide``: a fold of each Workload's decisions over a view of what was read and decided so
far, ``planb.regions.dispatcher.view``), then writes the nominations and the ledger
(``planb.regions.dispatcher.writes``). For every Workload of the MultiKueue check that Kueue would sync now
(``planb.regions.dispatcher.reads.awaits_nomination``):

1. **Plan once per dispatch.** The job's pairs are every region of the MultiKueueConfig that Kueue reaches
   (MultiKueueCluster Active) times the rungs of that region's ladder (its ClusterQueue's flavors for the
   accelerators, read with the region's MultiKueue access), for the job's shape (``reads.job_shape``). Google's
   advice for each pair comes from the ``advise`` the caller gives; the plan (``offer_order.plan``) and each pair's
   advice go into the manager's ConfigMap ``kueue-system/planb-regions-ledger`` (``ledger_store``), which
   ``planb status --capacity`` shows. Where advice is missing for every pair the plan is AllAtOnce, as Kueue's
   MultiKueue dispatches by default: every region nominated, and the ConfigMap says why per pair.
2. **Read the outcomes.** Each region with a pair waiting is read for its copy of the Workload: a no there
   (``decide.copy_outcome``) ends the pair ``FAILED`` in the ledger; a region that left the MultiKueueConfig or is
   not Active fails its pairs too, because Kueue no longer syncs it.
3. **Nominate.** ``OfferPlan.due`` says which pairs to ask now; the regions of every pair waiting are written to the
   Workload's ``status.nominatedClusterNames`` in the plan's order, by the apply Kueue's Incremental dispatcher sends
   (``writes.admission_apply``); each new pair is an ask in the ledger.
4. **Close.** When Kueue sets ``clusterName``, the pair of that region (the rung of its copy's admission) is
   ``GRANTED`` and every other pair waiting ``WITHDRAWN``; a Workload that goes, finishes or loses its quota before
   that withdraws its pairs. The ledger is written whenever it changed.

The plan, the attempts and the copies seen live in memory, as the Incremental dispatcher's round timer does in Kueue
(``kubernetes-sigs/kueue@v0.19.2 pkg/controller/workloaddispatcher/incrementaldispatcher.go#L60``). The ledger is read
from the ConfigMap at the first tick, and the asks an earlier keeper left open end ``WITHDRAWN``; a Workload still
waiting is planned again, the regions already nominated taken as asked then (``decide.adopt``), so their copies
and requests keep their place.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from planb.kube import Kube, Obj
from planb.printable import printable
from planb.regions.access.connection import region_kube
from planb.regions.dispatcher.advise import Advise
from planb.regions.dispatcher.decide import decide_tick
from planb.regions.dispatcher.job_dispatch import DispatchSettings, JobDispatch
from planb.regions.dispatcher.ledger import Ledger
from planb.regions.dispatcher.ledger_store import LastAdvice
from planb.regions.dispatcher.reads import Sources, read_tick
from planb.regions.dispatcher.reservation_reads import Read, Rooms
from planb.regions.dispatcher.view import View
from planb.regions.dispatcher.writes import write_tick


class Dispatcher:
    def __init__(
        self,
        manager: Kube,
        settings: DispatchSettings,
        advise: Advise,
        say: Callable[[str], None],
        wall: Callable[[], float] = time.time,
        regions: Callable[[Kube, str], Kube] = region_kube,
        read: Read | None = None,
    ) -> None:
        self.manager = manager
        self.settings = settings
        self.say: Callable[[str], None] = lambda line: say(printable(line, one_line=True))  # cluster text
        #: Reservation reads (``reservation_reads``), None where the keeper has no Compute Engine to ask.
        self.rooms = None if read is None else Rooms(read, self.say)
        self.sources = Sources(manager, settings, advise, self.rooms, regions)
        self.wall = wall
        #: What is kept between ticks: the dispatches under way, the ledger (None until the first tick reads it), the
        #: last advice, and whether the ledger's ConfigMap is behind.
        self.jobs: dict[str, JobDispatch] = {}
        self.ledger: Ledger | None = None
        self.last: LastAdvice | None = None
        self.dirty = False

    def tick(self, workloads: list[Obj], clusters: dict[str, Obj], config: Obj) -> None:
        """One look at the manager's Workloads (the keeper read them): what it reads of the regions and of Google
        (reads), the nominations and ledger entries it decides over that (decide), then its writes (writes)."""
        now = self.wall()
        reading = read_tick(self.sources, workloads, clusters, config, self.jobs, self.ledger is None, now)
        kept = View(tuple(reading.active), self.ledger or Ledger(), self.jobs, self.last, self.dirty)
        decided = decide_tick(reading, kept, self.settings, now, self.wall())
        for line in decided.said:
            self.say(line)
        written = write_tick(self.manager, decided.nominations, decided.view, self.say)
        self.jobs, self.ledger, self.last, self.dirty = dict(written.jobs), written.ledger, written.last, written.dirty
