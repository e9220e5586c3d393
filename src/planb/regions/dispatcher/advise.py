"""Where the dispatcher's advice for a pair comes from: Google's ``advice.capacity`` through the poster given
(``--advice-url``), or no source at all; a TPU pair is never asked (planb.regions.dispatcher.google_advice)."""

from __future__ import annotations

from collections.abc import Callable

from planb.regions.dispatcher.google_advice import Advice, Post, ask, no_tpu_advice
from planb.regions.dispatcher.ledger import Key
from planb.regions.dispatcher.nomination import advice_zones

#: Google's advice for one pair (``planb.regions.dispatcher.google_advice.ask`` behind it, or a refusal).
Advise = Callable[[Key], Advice]


def no_advice(why: str) -> Advise:
    """An ``advise`` without a source (no ``--advice-url``): a pair it would ask about has no advice, and says why
    (the plan then races, and the ConfigMap says so); a TPU pair has none by design, as with a source
    (``planb.regions.dispatcher.google_advice.no_tpu_advice``), so it is ordered by the ledger and the
    reservations, not raced."""
    return lambda key: no_tpu_advice(key) or Advice.absent(why)


def google_advise(post: Post, project: str) -> Advise:
    """Google's ``advice.capacity`` for each pair, in the zones the catalog lists for its machine type there; a TPU
    pair is not asked (``planb.regions.dispatcher.google_advice.no_tpu_advice``: Google shows no TPU availability
    there)."""
    return lambda key: ask(post, project, key, advice_zones(key))
