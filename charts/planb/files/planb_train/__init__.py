"""planb training job: the tutorial's JAX ``JaxTrainer`` job, made configurable, sharded and resumable.

train.py is the command line; this package holds the rest, each module with its part of the story in its docstring:

* ``config``: the ``PLANB_*`` variables (the table of them, their defaults and meaning) -> ``TrainConfig``;
* ``checkpoints``: which run owns a checkpoint directory; Orbax save and restore;
* ``interval``: at which steps the loop saves (planb's policy: saves take at most 3% of training);
* ``progress``: the last step reached, next to the checkpoints (what a restart lost);
* ``models``: by family, each a ``models.task.Task``: ``linear`` (the tutorial's regression) and ``transformer``
  (the LM, its attention in ``models.attention``);
* ``sharding``: the device mesh and the rules that split the transformer's state and batch over it;
* ``loop``: the loop both runners share, in parts: ``startup`` (setup and resume), ``steps`` (one step),
  ``notice`` (the save on a stop notice) and ``metrics`` (throughput, MFU, the metrics file);
* ``runners``: Ray Train ``JaxTrainer`` (``runners.ray_train``) or plain JAX in this process (``runners.plain``), and
  how a run that stops before its last step ends (``runners.outcome``);
* ``processes``: one run over several JAX processes (``jax.distributed``), and their stop together;
* ``aot``: the step compiled ahead of time for a TPU slice this machine lacks (planb.build.aot; the job never
  imports it).

The chart mounts train.py and this package together at /app (ConfigMap ``items`` paths) and puts /app on
``PYTHONPATH``, so that a Ray worker imports the functions Ray ships it pickled by reference. They import nothing
from the planb package.
"""
