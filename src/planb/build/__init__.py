"""Build-side generators: the chart's copied files, the collection's generated facts, its tarball and the
golden files the tests compare with. ``make values``, ``make golden`` and ``make collection`` run them; no
module of the product imports this package (tests/unit/test_imports.py)."""
