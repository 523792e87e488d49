import sys

from bicrit.reproduce import main

raise SystemExit(main(sys.argv[1:]))
