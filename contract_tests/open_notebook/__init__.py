"""The open-notebook profile's own tests (what no other profile has; the shared checks are in
concerns/ and base/)."""

PROFILES = ("open-notebook",)  # the profiles these tests apply to: other runs do not collect the folder
