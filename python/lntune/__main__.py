"""python -m lntune ARGS...: the lntune command-line tool (lntune info, show,
tune, ...), the same executable `lntune` that the CMake build makes.

An installed package (pip install .) carries it as lntune/bin/lntune; from a
source tree, build/tuner/lntune is used; else `lntune` on PATH. The process
is replaced by the CLI (os.execv), so output and exit status are the CLI's:
`python -m lntune info` prints what `lntune info` prints and exits with its
status. When no CLI can be found, it prints where it looked and exits with 127
(as a shell does for a missing command).
"""

import os
import shutil
import sys
from pathlib import Path


def cli_path():
    """The lntune executable to run, or None; and the places looked at."""
    here = Path(__file__).resolve().parent
    candidates = [here / "bin" / "lntune", here.parent.parent / "build" / "tuner" / "lntune"]
    tried = []
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c), tried
        tried.append(str(c))
    found = shutil.which("lntune")
    if found:
        return found, tried
    tried.append("`lntune` on PATH")
    return None, tried


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    path, tried = cli_path()
    if path is None:
        print("python -m lntune: the lntune command-line tool was not found (looked at: %s). "
              "Install the package with pip (it carries the tool) or build it (cmake --build build)."
              % "; ".join(tried), file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, ["lntune"] + list(argv))
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
