"""The regions dispatcher, Kueue's External MultiKueue dispatcher: which regions a Workload is nominated to, in the
order Google's advice, the obtainability ledger and a reservation's room give (docs/regions.md, "Advice-ordered
dispatch")."""
