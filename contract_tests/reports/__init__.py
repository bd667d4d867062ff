"""A run's reports: the collector that turns test outcomes into per-requirement verdicts, and
every format (console, results.json, results.md, results.html, JUnit), and the merge of shards."""
