"""The section-source-hosted profile's own tests (what no other profile has; the shared checks are in
concerns/ and base/)."""

PROFILES = ("section-source-hosted",)  # the profiles these tests apply to: other runs do not collect the folder
