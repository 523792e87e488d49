"""Writes ``golden.json``: the digest of every case of :mod:`tests.golden.cases` as the code
stands (``python -m tests.golden.record``; ``BICRIT_DATA`` as for the tests)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from tests.conftest import data_root
from tests.golden.cases import CASES

GOLDEN = Path(__file__).with_name("golden.json")


def main() -> int:
    root = data_root()
    only = set(sys.argv[1:])
    out = json.loads(GOLDEN.read_text()) if GOLDEN.exists() and only else {}
    for name, case in CASES.items():
        if only and name not in only:
            continue
        print(name, flush=True)
        out[name] = case(root)
    fd, tmp = tempfile.mkstemp(dir=GOLDEN.parent, prefix=".golden.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, GOLDEN)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
