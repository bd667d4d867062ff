"""What the suite builds for a server to serve: each profile's fixture kind (a vault, docs and
code roots, notebook collections, a file root, the hosted profile's upstream double and its
tokens), the canaries planted in them, the path-attack corpus and its oracles. Imports the
contracts and the transports."""
