"""planb training job, how a run ends.

A run is finished only when it reaches its last step: then, and only then, the process exits 0 and prints
"Training Complete!". A run that stops on a notice before it (after saving) is not finished, whichever process the
notice reached: each Ray worker that stops raises ``StoppedOnNoticeError`` once every worker is past its save, so
``trainer.fit()`` fails, and the driver ends by the signal it was told of, or else with ``EXIT_STOPPED``; the plain
runner ends the same way. Either is a failed run to KubeRay, never a finished one: its retry (the chart's
job.backoffLimit) resumes the run from the checkpoint.
"""

from __future__ import annotations

#: train.py's exit status when the run stopped on a notice before its last step and no signal reached the process
#: itself (EX_TEMPFAIL, sysexits.h: a temporary failure, try again). The run saved and is not finished.
EXIT_STOPPED = 75


class UnsupportedByRayError(RuntimeError):
    """The configuration is valid, but the installed Ray cannot schedule it (the message says why)."""


class StoppedOnNoticeError(RuntimeError):
    """The run stopped on a stop notice before its last step, after saving: it is not finished (the message says
    where it stopped). A Ray worker raises it so that ``trainer.fit()`` fails; the driver raises it to train.py's
    command line, which exits with ``EXIT_STOPPED``."""
