"""Minimal PEP 517 backend: a pure-Python wheel with an `srtctl` console script."""

import base64
import hashlib
import zipfile
from pathlib import Path

NAME, VERSION = "srtctl_standin", "0.0.1"
DIST = f"{NAME}-{VERSION}.dist-info"
FILES = {
    f"{DIST}/METADATA": f"Metadata-Version: 2.1\nName: srtctl-standin\nVersion: {VERSION}\n",
    f"{DIST}/WHEEL": "Wheel-Version: 1.0\nGenerator: standin\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    f"{DIST}/entry_points.txt": "[console_scripts]\nsrtctl = srtctl_standin.cli:main\n",
}


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    root = Path(__file__).parent
    files = dict(FILES)
    for path in sorted((root / "srtctl_standin").glob("*.py")):
        files[f"srtctl_standin/{path.name}"] = path.read_text()
    record = []
    wheel = Path(wheel_directory) / f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            data = text.encode()
            archive.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append(f"{DIST}/RECORD,,")
        archive.writestr(f"{DIST}/RECORD", "\n".join(record) + "\n")
    return wheel.name
