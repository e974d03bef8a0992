import sys

from workstation.cli import main

sys.exit(main())
