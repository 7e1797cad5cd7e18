"""Core tests import their helpers from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

