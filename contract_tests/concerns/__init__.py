"""Concern tests written once for every profile, driven by the profile's spec (`concerns`,
`canaries`, `errors`) and the fixture adapter (synthetic/adapter.py): path attacks, leaks, side
effects and the tool surface. A profile folder keeps only what no other profile has."""
