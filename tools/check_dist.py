"""Checks the archives tools/build-wheels made: one abi3 manylinux wheel holding the native
module, its type stubs (``_native.pyi``, ``py.typed``) and the bundled dataset, and an sdist
holding the Rust workspace and the dataset. Exits with one line per problem."""

from __future__ import annotations

import sys
import tarfile
import zipfile
from pathlib import Path

WHEEL_NEEDS = ("bicrit/__init__.py", "bicrit/_native.pyi", "bicrit/py.typed")
SDIST_NEEDS = (
    "Cargo.toml",
    "Cargo.lock",
    "pyproject.toml",
    "rust/bicrit-py/Cargo.toml",
    "python/bicrit/_native.pyi",
    "python/bicrit/py.typed",
)
DATASET = Path("python/bicrit/data")


def main(folder: str) -> int:
    out = Path(folder)
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    problems = []
    if len(wheels) != 1 or len(sdists) != 1:
        problems.append(f"{out}: expected one wheel and one sdist, found {wheels + sdists}")
    # the bundled dataset: every file of python/bicrit/data, in both archives
    data = sorted(p.relative_to("python").as_posix() for p in DATASET.rglob("*") if p.is_file())
    if not data:
        problems.append(f"{DATASET} holds no file (run from the repository root)")
    for wheel in wheels:
        tags = wheel.name.removesuffix(".whl").split("-")[-3:]
        if tags[:2] != ["cp311", "abi3"] or not tags[2].startswith("manylinux_"):
            problems.append(f"{wheel.name}: not a cp311-abi3-manylinux wheel (tags {tags})")
        names = set(zipfile.ZipFile(wheel).namelist())
        if not any(n.startswith("bicrit/_native.") and n.endswith(".abi3.so") for n in names):
            problems.append(f"{wheel.name}: no bicrit/_native.abi3.so")
        problems += [f"{wheel.name}: missing {n}" for n in (*WHEEL_NEEDS, *data) if n not in names]
    for sdist in sdists:
        with tarfile.open(sdist) as tar:
            top = sdist.name.removesuffix(".tar.gz")
            names = {n.removeprefix(top + "/") for n in tar.getnames()}
        need = (*SDIST_NEEDS, *(f"python/{n}" for n in data))
        problems += [f"{sdist.name}: missing {n}" for n in need if n not in names]
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"dist ok: {[p.name for p in wheels + sdists]}, {len(data)} dataset files in each")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "dist"))
