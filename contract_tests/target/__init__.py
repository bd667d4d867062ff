"""Start, reach and talk to the implementation under test: the run's options and state, its
sessions (stdio or HTTP, started or attached) and the preflight beside them."""
