"""A compact, append-only store of a run's emulator frames and RAM.

Frames are kept as raw ALE palette values (``ale.getScreen()``), not RGB. Each
frame is one block in ``frames.bin``: a keyframe (the whole frame, after 30
deltas or when most of the screen changed), a delta (the 8-byte words that
changed, XOR-ed with the previous frame, then their positions) or nothing at all
when the frame repeats the previous one. Keyframes and deltas are
zlib-compressed, except deltas under 256 bytes, which are stored as they are
(compressing them costs more time than it saves space). ``frames.idx`` holds a
header and one fixed-size record per frame (offset, length, kind), so any frame
decodes from its keyframe in a few deltas. ``frames.pal`` maps palette values to
RGB, learned from the observations as values appear; ``frames.ram`` holds 128
bytes per frame.

Every file is append-only. A reader counts a frame only when its index record,
its block and its RAM are all on disk, so a store left by a killed writer reads
back up to the last complete frame.
"""

from __future__ import annotations

import hashlib
import io
import struct
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

INDEX_FILE = "frames.idx"
DATA_FILE = "frames.bin"
PALETTE_FILE = "frames.pal"
RAM_FILE = "frames.ram"
FILES = (INDEX_FILE, DATA_FILE, PALETTE_FILE, RAM_FILE)

RAM_SIZE = 128
KEY, DELTA, SAME, SMALL_DELTA = 0, 1, 2, 3  # block kinds
KEY_SHARE = 0.75  # a frame that changed in more than this share of its 8-byte words is stored as a keyframe
SMALL = 256  # deltas shorter than this are stored as is: zlib would cost more time than it saves bytes

_MAGIC = b"ATFS"
_VERSION = 1
_HEADER = struct.Struct("<4sHHH6x")  # magic, version, height, width
_RECORD = struct.Struct("<QIB3x")  # offset, length, kind
_RECORD_DTYPE = np.dtype([("offset", "<u8"), ("length", "<u4"), ("kind", "u1"), ("pad", "V3")])
_PAL_RECORD = 4  # palette value, r, g, b


class FrameStoreError(Exception):
    """A frame store that is missing, damaged or used wrongly."""


class _FrameStore:
    """Decoding, caching and PNG encoding shared by the writer and the reader.

    Thread-safe: one thread may append while others read.
    """

    height: int
    width: int
    path: Path

    def __init__(self, cache_frames: int, cache_pngs: int) -> None:
        self._lock = threading.RLock()
        self._reader: io.BufferedReader | None = None  # frames.bin opened for reading on the first read
        self._kinds: list[int] = []
        self._spans: list[tuple[int, int]] = []  # (offset, length) per frame
        self._lut = np.zeros((256, 3), np.uint8)  # palette value -> RGB
        self._known = np.zeros(256, bool)
        self._ram = bytearray()
        self._frames: OrderedDict[int, np.ndarray] = OrderedDict()
        self._cache_frames = cache_frames
        self._png_digest: dict[int, bytes] = {}
        self._pngs: OrderedDict[bytes, bytes] = OrderedDict()
        self._cache_pngs = cache_pngs

    def __len__(self) -> int:
        return len(self._kinds)

    def limit_caches(self, frames: int, pngs: int) -> None:
        """Keep at most ``frames`` decoded frames and ``pngs`` encoded PNGs in memory (a headless batch run
        needs only its prompt's last few; the defaults suit one run scrubbed in the TUI)."""
        with self._lock:
            self._cache_frames = max(1, min(self._cache_frames, frames))
            self._cache_pngs = max(1, min(self._cache_pngs, pngs))
            while len(self._frames) > self._cache_frames:
                self._frames.popitem(last=False)
            while len(self._pngs) > self._cache_pngs:
                self._pngs.popitem(last=False)

    def _read_block(self, offset: int, length: int) -> bytes:
        if self._reader is None:
            self._reader = open(self.path / DATA_FILE, "rb")
        self._reader.seek(offset)
        return self._reader.read(length)

    def _check(self, index: int) -> int:
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"frame {index} is out of range: the store holds {n} frames")
        return index

    def _remember(self, index: int, frame: np.ndarray) -> None:
        frame.flags.writeable = False
        self._frames[index] = frame
        if len(self._frames) > self._cache_frames:
            self._frames.popitem(last=False)

    def indices(self, index: int) -> np.ndarray:
        """Palette values of a frame (HxW uint8, read-only)."""
        with self._lock:
            return self._indices(self._check(index))

    def _indices(self, index: int) -> np.ndarray:
        hit = self._frames.get(index)
        if hit is not None:
            self._frames.move_to_end(index)
            return hit
        start = index  # walk back to a cached frame or a keyframe
        while start not in self._frames and self._kinds[start] != KEY:
            start -= 1
        try:
            if start in self._frames:
                frame = self._frames[start].copy()
            else:
                frame = np.frombuffer(self._inflate(start), np.uint8).reshape(self.height, self.width).copy()
            words = frame.reshape(-1).view("<u8")
            for k in range(start + 1, index + 1):
                kind = self._kinds[k]
                if kind == DELTA or kind == SMALL_DELTA:
                    payload = self._inflate(k) if kind == DELTA else self._read_block(*self._spans[k])
                    n = len(payload) // 10
                    words[np.frombuffer(payload, "<u2", n, 8 * n)] ^= np.frombuffer(payload, "<u8", n)
        except (zlib.error, ValueError, IndexError) as e:
            raise FrameStoreError(f"frame {index} is damaged ({e}); the store cannot decode it") from None
        self._remember(index, frame)
        return frame

    def _inflate(self, index: int) -> bytes:
        return zlib.decompress(self._read_block(*self._spans[index]))

    def rgb(self, index: int) -> np.ndarray:
        """The frame as the observation showed it (HxWx3 uint8)."""
        return np.take(self._lut, self.indices(index), axis=0)

    def ram(self, index: int) -> np.ndarray:
        """The 128 bytes of RAM after that frame."""
        with self._lock:
            index = self._check(index)
            return np.frombuffer(self._ram[index * RAM_SIZE : (index + 1) * RAM_SIZE], np.uint8)

    def palette(self) -> dict[int, tuple[int, int, int]]:
        """Every palette value seen so far -> its RGB colour."""
        with self._lock:
            return {int(v): _rgb(self._lut[v]) for v in np.flatnonzero(self._known)}

    def png(self, index: int) -> bytes:
        """PNG of the frame, encoded once per distinct frame content and cached. A frame whose PNG is
        cached is not decoded again (a prompt's history images are the last turns' ones: in a C = 256
        batch that decoding was ~6 % of the CPU)."""
        with self._lock:
            index = self._check(index)
            frame = None
            digest = self._png_digest.get(index)  # frames never change once stored
            if digest is None:
                frame = self._indices(index)
                digest = self._png_digest[index] = hashlib.blake2b(frame.tobytes(), digest_size=16).digest()
            data = self._pngs.get(digest)
            if data is not None:
                self._pngs.move_to_end(digest)
                return data
            if frame is None:
                frame = self._indices(index)
        data = encode_png(frame, self._lut)  # outside the lock: entries of the frame's colours never change
        with self._lock:
            self._pngs[digest] = data
            if len(self._pngs) > self._cache_pngs:
                self._pngs.popitem(last=False)
        return data


def encode_png(indices: np.ndarray, lut: np.ndarray) -> bytes:
    """Palette-mode PNG holding only the colours used (decodes to exactly ``lut[indices]``)."""
    used = np.flatnonzero(np.bincount(indices.ravel(), minlength=256))
    remap = np.zeros(256, np.uint8)
    remap[used] = np.arange(len(used), dtype=np.uint8)
    h, w = indices.shape
    image = Image.frombytes("P", (w, h), remap.take(indices).tobytes())
    image.putpalette(lut[used].tobytes(), "RGB")
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=6)
    return out.getvalue()


def _rgb(colour: np.ndarray) -> tuple[int, int, int]:
    """An RGB colour (three numbers) as a tuple of ints."""
    r, g, b = (int(c) for c in colour)
    return r, g, b


class FrameWriter(_FrameStore):
    """Appends frames to a new store; also serves every frame written so far.

    ``append`` takes ``ale.getScreen()``, ``ale.getScreenRGB()`` and
    ``ale.getRAM()`` of one frame and returns its index. ``flush`` hands buffered
    bytes to the OS (once per turn); nothing is fsync-ed.
    """

    def __init__(self, directory: Path, height: int, width: int = 160, keyframe_every: int = 30) -> None:
        super().__init__(cache_frames=64, cache_pngs=512)
        if not (0 < height and 0 < width and width % 8 == 0 and height * width <= 8 * 65536):
            raise ValueError(f"frame size {height}x{width} is not supported (width a multiple of 8, at most 512K pixels)")
        self.path = Path(directory)
        self.height, self.width = height, width
        self._keyframe_every = keyframe_every
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            self._index = open(self.path / INDEX_FILE, "xb")
        except FileExistsError:
            raise FrameStoreError(f"{self.path} already holds a frame store; choose a new directory") from None
        self._data = open(self.path / DATA_FILE, "wb")
        self._palfile = open(self.path / PALETTE_FILE, "wb", buffering=0)  # rare writes, visible at once
        self._ramfile = open(self.path / RAM_FILE, "wb")
        self._index.write(_HEADER.pack(_MAGIC, _VERSION, height, width))
        self._index.flush()
        self._offset = 0  # bytes written to frames.bin
        self._flushed = 0  # bytes of frames.bin the OS has
        self._prev: np.ndarray | None = None  # previous frame as 8-byte words
        self._known_bytes = b""  # palette values seen so far, for bytes.translate
        self._deltas = 0  # deltas since the last keyframe
        self.closed = False

    @classmethod
    def branch(cls, directory: Path, source: _FrameStore, n_frames: int) -> FrameWriter:
        """A new store in ``directory`` starting with the first ``n_frames`` frames of ``source``."""
        if not 0 <= n_frames <= len(source):
            raise FrameStoreError(f"cannot copy {n_frames} frames: the source holds {len(source)}")
        writer = cls(directory, source.height, source.width)
        for value, colour in source.palette().items():
            writer._learn_value(value, colour)
        for i in range(n_frames):
            writer._append(source.indices(i), source.ram(i))
        return writer

    def append(self, screen: np.ndarray, rgb: np.ndarray | Callable[[], np.ndarray], ram: np.ndarray) -> int:
        """Store one frame (palette values, its RGB observation, its RAM); returns its index."""
        frame = np.array(screen, dtype=np.uint8, order="C")  # a copy: the caller may reuse its buffer
        if frame.shape != (self.height, self.width):
            raise ValueError(f"screen is {frame.shape}, the store holds {self.height}x{self.width} frames")
        with self._lock:
            return self._append(frame, ram, rgb)

    def _append(self, frame: np.ndarray, ram: np.ndarray,
                rgb: np.ndarray | Callable[[], np.ndarray] | None = None) -> int:
        if self.closed:
            raise FrameStoreError("the frame store is closed; no more frames can be added")
        ram_bytes = ram.tobytes() if isinstance(ram, np.ndarray) else bytes(ram)
        if len(ram_bytes) != RAM_SIZE:
            raise ValueError(f"ram has {len(ram_bytes)} bytes, expected {RAM_SIZE}")
        words = frame.reshape(-1).view("<u8")
        prev = self._prev
        changed = None
        base = words  # the frame a delta is taken against: the previous one, when there is one
        if prev is not None and self._deltas < self._keyframe_every:
            base = prev
            changed = (words != prev).nonzero()[0]
            if len(changed) > len(words) * KEY_SHARE:  # most of the screen changed
                changed = None
        if changed is None:
            data = frame.tobytes()
            if rgb is not None and data.translate(None, self._known_bytes):
                self._learn(frame, rgb)
            kind, block = KEY, zlib.compress(data, 1)
            self._deltas = 0
        elif len(changed) == 0:
            kind, block = SAME, b""
        else:  # delta: the changed 8-byte words, XOR-ed, then their positions
            now = words[changed]
            if rgb is not None and now.tobytes().translate(None, self._known_bytes):
                self._learn(frame, rgb)
            now ^= base[changed]
            payload = now.tobytes() + changed.astype("<u2").tobytes()
            if len(payload) < SMALL:
                kind, block = SMALL_DELTA, payload
            else:
                kind, block = DELTA, zlib.compress(payload, 1)
            self._deltas += 1
        offset = self._offset
        if block:
            self._data.write(block)
            self._offset = offset + len(block)
        self._ramfile.write(ram_bytes)
        self._ram += ram_bytes
        self._index.write(_RECORD.pack(offset, len(block), kind))
        self._spans.append((offset, len(block)))
        self._kinds.append(kind)
        self._prev = words
        index = len(self._kinds) - 1
        self._remember(index, frame)
        return index

    def _learn(self, frame: np.ndarray, source: np.ndarray | Callable[[], np.ndarray]) -> None:
        rgb = source() if callable(source) else source  # the clock passes a getter: RGB fetched only when needed
        if rgb.shape != (self.height, self.width, 3):
            raise ValueError(f"rgb is {rgb.shape}, expected {self.height}x{self.width}x3")
        flat, colours = frame.ravel(), rgb.reshape(-1, 3)
        for value in np.unique(flat[~self._known.take(flat)]):
            where = int(np.argmax(flat == value))
            self._learn_value(int(value), _rgb(colours[where]))

    def _learn_value(self, value: int, colour: tuple[int, int, int]) -> None:
        self._lut[value] = colour
        self._known[value] = True
        self._known_bytes = bytes(np.flatnonzero(self._known).astype(np.uint8))
        self._palfile.write(bytes((value, *colour)))

    def _read_block(self, offset: int, length: int) -> bytes:
        if offset + length > self._flushed:
            self._data.flush()
            self._flushed = self._offset
        return super()._read_block(offset, length)

    def flush(self) -> None:
        """Push every buffered byte to the OS: data and RAM before the index."""
        with self._lock:
            if self.closed:
                return
            self._data.flush()
            self._flushed = self._offset
            self._ramfile.flush()
            self._index.flush()

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.flush()
            for f in (self._data, self._ramfile, self._index, self._palfile):
                f.close()
            self.closed = True  # frames stay readable; the read handle closes with the object

    def __enter__(self) -> FrameWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FrameReader(_FrameStore):
    """Reads a store written by ``FrameWriter``, complete or cut short by a killed writer.

    A directory without ``frames.idx`` reads as an empty store. ``refresh`` picks
    up frames appended since the reader opened (for watching a live run).
    """

    def __init__(self, directory: Path) -> None:
        super().__init__(cache_frames=32, cache_pngs=128)
        self.path = Path(directory)
        if not self.path.is_dir():
            raise FrameStoreError(f"no frame store at {self.path}: the directory does not exist")
        self.height = self.width = 0
        self.refresh()

    def refresh(self) -> int:
        """Re-read the index, RAM and palette files; returns the number of readable frames."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> int:
        try:
            raw = (self.path / INDEX_FILE).read_bytes()
        except FileNotFoundError:
            return 0
        if len(raw) < _HEADER.size:
            return 0
        magic, version, height, width = _HEADER.unpack_from(raw)
        if magic != _MAGIC or version != _VERSION:
            raise FrameStoreError(f"{self.path / INDEX_FILE} is not a frame index (version {_VERSION})")
        self.height, self.width = height, width
        n = (len(raw) - _HEADER.size) // _RECORD.size
        records = np.frombuffer(raw, _RECORD_DTYPE, n, _HEADER.size)
        data_size = _size(self.path / DATA_FILE)
        self._ram = bytearray(_read(self.path / RAM_FILE))
        ends = records["offset"] + records["length"]
        bad = np.flatnonzero(ends > data_size)
        n = min(int(bad[0]) if bad.size else n, len(self._ram) // RAM_SIZE)
        records = records[:n]
        self._kinds = records["kind"].tolist()
        self._spans = list(zip(records["offset"].tolist(), records["length"].tolist()))
        pal = _read(self.path / PALETTE_FILE)
        entries = np.frombuffer(pal, np.uint8, len(pal) // _PAL_RECORD * _PAL_RECORD).reshape(-1, _PAL_RECORD)
        self._lut[entries[:, 0]] = entries[:, 1:]
        self._known[entries[:, 0]] = True
        return n

    def close(self) -> None:
        """Release the data file handle; a later read opens it again."""
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def __enter__(self) -> FrameReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
