import sys

from sympile.cache.cli import main

sys.exit(main())
