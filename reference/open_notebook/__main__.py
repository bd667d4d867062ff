"""`python -m reference.open_notebook --notebooks ROOT [--http --port N]`."""

import sys

from .server import main

sys.exit(main())
