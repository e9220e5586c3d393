"""The regions' MultiKueue tokens renewed from inside the manager (tokens), and `planb regions renew-tokens`, which
the regions_keeper role runs as a CronJob (command)."""
