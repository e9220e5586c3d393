"""The MultiKueue manager's side of planb across regions (docs/regions.md), one folder per controller: the keeper
(keeper: quarantine of a lost region, release of the quota an evicted RayJob holds, a clean rejoin), the dispatcher
(dispatcher: advice-ordered nomination), the calendar watch (calendar), and what they share (access: reaching a
region, reading Kueue's objects); cli wires them for `planb regions keep`."""
