# SPDX-License-Identifier: MIT
"""python3 -m tplan: the package's version and the libtplan it loads."""

import sys

import tplan

try:
    print("tplan %s, libtplan %s (%s)" % (tplan.__version__, tplan.library_version(), tplan.library_path()))
except tplan.LibraryNotFound as e:
    print("tplan %s; %s" % (tplan.__version__, e), file=sys.stderr)
    sys.exit(1)
