# SPDX-License-Identifier: MIT
"""A PEP 517 build backend for the tplan package, standard library only.

pip builds a pyproject.toml project in an isolated environment into which
it first installs the backend's requirements from a package index.  With
setuptools as the backend that needs the index, which CI machines cannot
reach.  This backend needs nothing: pyproject.toml says ``requires = []``
and ``backend-path = ["."]``, so ``pip install ./python`` works offline.

It builds pure-Python wheels (``py3-none-any``) of the ``tplan`` package,
source distributions, and PEP 660 editable wheels (a ``.pth`` file).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = "tplan"
# Zip timestamps fixed, so a wheel's bytes depend only on its sources.
EPOCH = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")))[:6]


def _project() -> dict:
    text = (HERE / "pyproject.toml").read_text()
    try:
        import tomllib  # Python 3.11

        return tomllib.loads(text)["project"]
    except ImportError:
        # Python 3.9/3.10: the few flat fields this file uses.
        proj = text.split("[project]", 1)[1].split("\n[", 1)[0]
        out = {}
        for key in ("name", "version", "description", "requires-python", "readme"):
            m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), proj, re.M)
            if m:
                out[key] = m.group(1)
        out["optional-dependencies"] = {}
        return out


def _dist_name() -> tuple[str, str]:
    p = _project()
    return p["name"], p["version"]


def _metadata() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % p["name"],
        "Version: %s" % p["version"],
        "Summary: %s" % p.get("description", ""),
        "License: MIT",
    ]
    if "requires-python" in p:
        lines.append("Requires-Python: %s" % p["requires-python"])
    for dep in p.get("dependencies", []):
        lines.append("Requires-Dist: %s" % dep)
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append("Provides-Extra: %s" % extra)
        for dep in deps:
            lines.append('Requires-Dist: %s; extra == "%s"' % (dep, extra))
    body = ""
    readme = p.get("readme")
    if readme and (HERE / readme).is_file():
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (HERE / readme).read_text()
    return "\n".join(lines) + "\n" + body


def _wheel_file() -> str:
    return "Wheel-Version: 1.0\nGenerator: tplan_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _sources() -> list[Path]:
    """The package's files: Python modules and typing markers, no caches."""
    out = []
    for path in sorted((HERE / PACKAGE).rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        if path.suffix in (".py", ".typed"):
            out.append(path)
    return out


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class _Wheel:
    def __init__(self, path: Path, dist_info: str):
        self.zf = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.dist_info = dist_info
        self.record: list[str] = []

    def add(self, name: str, data: bytes) -> None:
        info = zipfile.ZipInfo(name, EPOCH)
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zf.writestr(info, data)
        self.record.append("%s,%s,%d" % (name, _digest(data), len(data)))

    def close(self) -> None:
        record = self.dist_info + "/RECORD"
        self.record.append(record + ",,")
        info = zipfile.ZipInfo(record, EPOCH)
        info.external_attr = 0o644 << 16
        self.zf.writestr(info, "\n".join(self.record) + "\n")
        self.zf.close()


def _dist_info_files() -> dict[str, str]:
    return {"METADATA": _metadata(), "WHEEL": _wheel_file(), "top_level.txt": PACKAGE + "\n"}


def _build(wheel_directory: str, editable: bool) -> str:
    name, version = _dist_name()
    dist_info = "%s-%s.dist-info" % (name, version)
    filename = "%s-%s-py3-none-any.whl" % (name, version)
    wheel = _Wheel(Path(wheel_directory) / filename, dist_info)
    if editable:
        # PEP 660: the sources stay where they are, found through a .pth.
        wheel.add("%s.pth" % name, (str(HERE) + "\n").encode())
    else:
        for path in _sources():
            wheel.add(path.relative_to(HERE).as_posix(), path.read_bytes())
    for fname, text in _dist_info_files().items():
        wheel.add("%s/%s" % (dist_info, fname), text.encode())
    wheel.close()
    return filename


# ---- the PEP 517 / PEP 660 hooks ------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version = _dist_name()
    dist_info = Path(metadata_directory) / ("%s-%s.dist-info" % (name, version))
    dist_info.mkdir(parents=True, exist_ok=True)
    for fname, text in _dist_info_files().items():
        (dist_info / fname).write_text(text)
    return dist_info.name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, editable=False)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, editable=True)


def build_sdist(sdist_directory, config_settings=None):
    name, version = _dist_name()
    base = "%s-%s" % (name, version)
    filename = base + ".tar.gz"
    files = [HERE / "pyproject.toml", HERE / "tplan_build.py", HERE / "README.md"] + _sources()
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in files:
            if not path.is_file():
                continue
            info = tar.gettarinfo(str(path), arcname="%s/%s" % (base, path.relative_to(HERE).as_posix()))
            info.mtime = time.mktime(EPOCH + (0, 0, -1))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(path, "rb") as f:
                tar.addfile(info, f)
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        info.size = len(pkg_info)
        info.mtime = time.mktime(EPOCH + (0, 0, -1))
        tar.addfile(info, io.BytesIO(pkg_info))
    return filename
