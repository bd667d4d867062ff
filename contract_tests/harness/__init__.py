"""The suite's harness: processes, transports, fixtures, canaries, filesystem events."""
