"""planb training job, models by family, each a ``task.Task`` the loop trains: ``linear`` (the tutorial's
regression) and ``transformer`` (a small decoder-only LM, its attention in ``attention``)."""
