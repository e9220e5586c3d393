"""A list-and-watch cache of one collection, so the simulator reacts to each change as it happens.

What client-go's informers do, for one collection of plain dicts: list once, then watch from the
list's resourceVersion; every event updates the cache and calls `on_change`; a watch the server
ends is resumed from the last version seen (bookmarks keep it fresh); a version too old to resume
from (410 Gone) means listing again. API errors back off and retry until stopped. Kubernetes
documents the pattern under "Efficient detection of changes":
https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from planb.kube import Kube, KubeError, Obj

#: How long one watch request lasts before the server ends it and it is resumed.
WATCH_SECONDS = 60
#: The longest wait between two attempts while the API server keeps failing.
MAX_BACKOFF_S = 5.0


def key_of(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _version(obj: Obj) -> int | None:
    """The object's resourceVersion as a number (etcd's revision), None when it is not one."""
    try:
        return int(str((obj.get("metadata") or {}).get("resourceVersion")))
    except ValueError:
        return None


def newer(candidate: Obj, current: Obj | None) -> bool:
    """Whether `candidate` may replace `current`: not when both versions are numbers and it is older.

    Kubernetes calls resourceVersions opaque; the simulator only ever talks to its own etcd-backed
    API server, where they are revisions, and falls back to "the latest write wins" otherwise.
    """
    if current is None:
        return True
    new, old = _version(candidate), _version(current)
    return new is None or old is None or new >= old


class Informer:
    """Keeps `items` (key "namespace/name" -> object) in step with the API server, on a thread."""

    def __init__(
        self,
        kube: Kube,
        path: str,
        on_change: Callable[[], None] = lambda: None,
        log: Callable[[str], None] = print,
    ) -> None:
        self.kube = kube
        self.path = path
        self.on_change = on_change
        self.log = log
        self.items: dict[str, Obj] = {}
        self.lock = threading.Lock()
        #: Set once the first list has filled the cache.
        self.synced = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"informer {path}", daemon=True)
        self.error = ""

    def start(self) -> Informer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()

    def snapshot(self) -> list[Obj]:
        with self.lock:
            return list(self.items.values())

    @property
    def usable(self) -> bool:
        """Whether the cache may be read instead of the API server: listed once and its watch not failing."""
        return self.synced.is_set() and not self.error

    def get(self, key: str) -> Obj | None:
        """The cached object "namespace/name" (None when the cache does not hold it)."""
        with self.lock:
            return self.items.get(key)

    def put(self, obj: Obj) -> None:
        """Store an object the caller just wrote (the watch brings the same version a moment later)."""
        key = key_of(obj)
        with self.lock:
            if newer(obj, self.items.get(key)):
                self.items[key] = obj

    # ------------------------------------------------------------------ thread
    def _list(self) -> str:
        listing = self.kube.get(self.path) or {}
        fresh = {key_of(obj): obj for obj in listing.get("items", [])}
        with self.lock:
            self.items = fresh
        self.synced.set()
        self.on_change()
        return str((listing.get("metadata") or {}).get("resourceVersion", ""))

    def _loop(self) -> None:
        version = ""
        failures = 0
        while not self.stopping.is_set():
            try:
                if not version:
                    version = self._list()
                for event in self.kube.watch(self.path, version, WATCH_SECONDS):
                    obj = event.get("object") or {}
                    version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                    kind = event.get("type")
                    if kind in ("ADDED", "MODIFIED"):
                        with self.lock:
                            if newer(obj, self.items.get(key_of(obj))):
                                self.items[key_of(obj)] = obj
                    elif kind == "DELETED":
                        with self.lock:
                            self.items.pop(key_of(obj), None)
                    else:
                        continue  # BOOKMARK: only the version moved
                    self.on_change()
                    if self.stopping.is_set():
                        return
                failures = 0
                self.error = ""
            except (KubeError, OSError, ValueError) as exc:
                if isinstance(exc, KubeError) and exc.status == 410:
                    version = ""  # too old to resume: list again
                    continue
                failures += 1
                if str(exc) != self.error:
                    self.log(f"watch of {self.path}: {exc} (will retry)")
                    self.error = str(exc)
                version = ""
                self.stopping.wait(min(MAX_BACKOFF_S, 0.2 * 2**failures))
