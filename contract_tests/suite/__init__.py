"""The pytest side of a run, loaded by the plugin: what the suite knows of its test items, the
fixtures every suite test uses, and how a test's outcome becomes verdicts."""
