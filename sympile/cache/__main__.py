import sys

from sympile.cache.cli import console_main

sys.exit(console_main())
