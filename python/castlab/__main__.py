import sys

from castlab.cli import main

sys.exit(main())
