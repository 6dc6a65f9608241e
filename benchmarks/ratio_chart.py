"""A bar chart of speed ratios as a PNG, with the standard library only (zlib for the PNG stream
and a built-in 3x5 pixel font), so scripts/bench.sh needs no plotting package.

One row per workload, one bar per reference (LibTorch, the machine's limit) on a log2 axis from
1/8 to 8; 1.0 (parity) is the vertical line, right of it tapeflow is faster.
"""
import math
import struct
import zlib

# 3x5 glyphs, one 3-bit row per entry (bit 2 = left column); letters are drawn upper-case.
_FONT = {
    "A": (2, 5, 7, 5, 5), "B": (6, 5, 6, 5, 6), "C": (3, 4, 4, 4, 3), "D": (6, 5, 5, 5, 6),
    "E": (7, 4, 6, 4, 7), "F": (7, 4, 6, 4, 4), "G": (3, 4, 5, 5, 3), "H": (5, 5, 7, 5, 5),
    "I": (7, 2, 2, 2, 7), "J": (1, 1, 1, 5, 2), "K": (5, 5, 6, 5, 5), "L": (4, 4, 4, 4, 7),
    "M": (5, 7, 7, 5, 5), "N": (6, 5, 5, 5, 5), "O": (2, 5, 5, 5, 2), "P": (6, 5, 6, 4, 4),
    "Q": (2, 5, 5, 6, 3), "R": (6, 5, 6, 5, 5), "S": (3, 4, 2, 1, 6), "T": (7, 2, 2, 2, 2),
    "U": (5, 5, 5, 5, 7), "V": (5, 5, 5, 5, 2), "W": (5, 5, 7, 7, 5), "X": (5, 5, 2, 5, 5),
    "Y": (5, 5, 2, 2, 2), "Z": (7, 1, 2, 4, 7),
    "0": (7, 5, 5, 5, 7), "1": (2, 6, 2, 2, 7), "2": (6, 1, 2, 4, 7), "3": (6, 1, 2, 1, 6),
    "4": (5, 5, 7, 1, 1), "5": (7, 4, 6, 1, 6), "6": (3, 4, 7, 5, 7), "7": (7, 1, 2, 2, 2),
    "8": (7, 5, 7, 5, 7), "9": (7, 5, 7, 1, 6),
    "/": (1, 1, 2, 4, 4), "_": (0, 0, 0, 0, 7), ".": (0, 0, 0, 0, 2), "-": (0, 0, 7, 0, 0),
    ":": (0, 2, 0, 2, 0), "(": (2, 4, 4, 4, 2), ")": (2, 1, 1, 1, 2), "=": (0, 7, 0, 7, 0),
    "<": (1, 2, 4, 2, 1), ">": (4, 2, 1, 2, 4), "%": (5, 1, 2, 4, 5), ",": (0, 0, 0, 2, 4),
    "'": (2, 2, 0, 0, 0), "+": (0, 2, 7, 2, 0), " ": (0, 0, 0, 0, 0),
}
_SCALE = 2                       # each font pixel is 2x2 image pixels
_CHAR_W = 4 * _SCALE             # 3 columns + 1 of spacing
WHITE, BLACK, GREY = (255, 255, 255), (0, 0, 0), (200, 200, 200)
COLORS = [(31, 119, 180), (255, 127, 14), (44, 160, 44)]   # one per series


class Canvas:
    def __init__(self, width, height):
        self.width, self.height = width, height
        self.pixels = bytearray(WHITE * (width * height))

    def rect(self, x0, y0, x1, y1, color):
        x0, x1 = max(0, min(x0, x1)), min(self.width, max(x0, x1))
        for y in range(max(0, y0), min(self.height, y1)):
            start = (y * self.width + x0) * 3
            self.pixels[start:start + (x1 - x0) * 3] = bytes(color) * (x1 - x0)

    def text(self, x, y, s, color=BLACK):
        for ch in s.upper():
            for row, bits in enumerate(_FONT.get(ch, _FONT["-"])):
                for col in range(3):
                    if bits & (4 >> col):
                        px, py = x + col * _SCALE, y + row * _SCALE
                        self.rect(px, py, px + _SCALE, py + _SCALE, color)
            x += _CHAR_W

    def png(self):
        raw = b"".join(b"\x00" + bytes(self.pixels[y * self.width * 3:(y + 1) * self.width * 3])
                       for y in range(self.height))

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
                chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def write_chart(path, title, series_names, rows):
    """rows: [(label, [ratio or None per series])], ratio > 1 = tapeflow faster."""
    label_w = max([len(label) for label, _ in rows] + [10]) * _CHAR_W + 16
    plot_w, bar_h, gap = 480, 12, 8
    row_h = bar_h * len(series_names) + gap
    top = 60
    width = label_w + plot_w + 70
    height = top + row_h * len(rows) + 40
    c = Canvas(width, height)
    c.text(10, 10, title)
    for i, name in enumerate(series_names):   # legend
        x = 10 + i * 220
        c.rect(x, 28, x + 12, 38, COLORS[i])
        c.text(x + 18, 29, name)
    lo, hi = -3.0, 3.0                         # log2 range: 1/8 .. 8

    def xpos(ratio):
        v = min(hi, max(lo, math.log2(ratio)))
        return label_w + int((v - lo) / (hi - lo) * plot_w)

    axis_y = top + row_h * len(rows)
    for tick in (0.125, 0.25, 0.5, 1, 2, 4, 8):
        x = xpos(tick)
        c.rect(x, top - 4, x + (2 if tick == 1 else 1), axis_y, BLACK if tick == 1 else GREY)
        text = f"{tick:g}x" if tick >= 1 else f"1/{int(1 / tick)}"
        c.text(x - len(text) * _CHAR_W // 2, axis_y + 6, text)
    for r, (label, ratios) in enumerate(rows):
        y = top + r * row_h
        c.text(8, y + (row_h - gap) // 2 - 5, label)
        for s, ratio in enumerate(ratios):
            if ratio is None or ratio <= 0:
                continue
            y0 = y + s * bar_h
            c.rect(min(xpos(1), xpos(ratio)), y0, max(xpos(1), xpos(ratio)) + 1, y0 + bar_h - 1, COLORS[s])
            c.text(max(xpos(1), xpos(ratio)) + 4, y0 - 1, f"{ratio:.2f}")
    c.text(label_w, height - 14, "TAPEFLOW SPEED / REFERENCE SPEED (LOG SCALE, RIGHT = TAPEFLOW FASTER)")
    with open(path, "wb") as f:
        f.write(c.png())
