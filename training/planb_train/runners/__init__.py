"""planb training job, runners: Ray Train v2 ``JaxTrainer`` (``ray_train``), or plain JAX in this process
(``plain``); how a run that ends before its last step ends (``outcome``)."""
