"""The implementation under test, as one run sees it: its options, commands by role, sessions
(every server start and connection), tool calls in its own parameter names, the preflight,
and the run's state. Imports verdicts, synthetic, transports and contracts."""
