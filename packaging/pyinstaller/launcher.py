"""Entry point of the PyInstaller bundle: the same command line as `plur-desk`."""

import sys

from plur_desk.cli import main

sys.exit(main())
