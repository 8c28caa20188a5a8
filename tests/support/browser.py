"""Render HTML in Debian's headless chromium: a screenshot (decoded here) and the final DOM."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path

PAGE_TITLE = "wikisuggest review"


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def page(body: str) -> str:
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{PAGE_TITLE}</title></head>"
        f"<body style='background:#ffffff;margin:8px'>{body}</body></html>"
    )


def _run(args: list[str], html_file: Path) -> subprocess.CompletedProcess[bytes]:
    binary = chromium()
    assert binary is not None
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--force-device-scale-factor=1",
        # Lets pending loads (an image's onerror) settle before the capture.
        "--virtual-time-budget=3000",
        f"--user-data-dir={html_file.parent / 'chromium-profile'}",
        *args,
        html_file.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, timeout=120, check=True)


def dom(html_file: Path) -> str:
    """The document as chromium serialises it after loading (scripts, if any, have run)."""
    return _run(["--dump-dom"], html_file).stdout.decode("utf-8")


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    pixels: bytes  # RGB, row by row

    def rgb(self, x: int, y: int) -> tuple[int, int, int]:
        i = (y * self.width + x) * 3
        return self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]

    def where(self, colour: tuple[int, int, int], tolerance: int = 2) -> list[tuple[int, int]]:
        found = []
        for y in range(self.height):
            for x in range(self.width):
                pixel = self.rgb(x, y)
                if all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=True)):
                    found.append((x, y))
        return found


def screenshot(html_file: Path, out: Path, width: int = 1100, height: int = 700) -> Image:
    _run([f"--screenshot={out}", f"--window-size={width},{height}"], html_file)
    return decode_png(out.read_bytes())


def decode_png(data: bytes) -> Image:
    """8-bit RGB or RGBA, non-interlaced: what chromium writes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos = 8
    idat = b""
    width = height = colour_type = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        chunk = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and colour_type in (2, 6) and interlace == 0
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    rgb = bytearray()
    for y in range(height):
        start = y * (stride + 1)
        filter_type = raw[start]
        row = bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if filter_type == 1:
                row[i] = (row[i] + left) & 0xFF
            elif filter_type == 2:
                row[i] = (row[i] + up) & 0xFF
            elif filter_type == 3:
                row[i] = (row[i] + (left + up) // 2) & 0xFF
            elif filter_type == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                row[i] = (row[i] + pred) & 0xFF
        previous = row
        for x in range(width):
            rgb += row[x * channels : x * channels + 3]
    return Image(width, height, bytes(rgb))


def bands(points: list[tuple[int, int]]) -> int:
    """How many separate horizontal bands (rows of text) the points fall into."""
    rows = sorted({y for _, y in points})
    count = 0
    last = -10
    for y in rows:
        if y > last + 1:
            count += 1
        last = y
    return count
