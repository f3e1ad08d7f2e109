"""Real image files for the image tests, made by Pillow and pillow-heif (and, for the variants
Pillow cannot write, by small writers here that follow the formats' specifications)."""

from __future__ import annotations

import io
import struct
import zlib
from typing import Callable, Dict, List, Optional, Tuple

try:
    from PIL import Image, features
    PIL_ERROR: Optional[str] = None
except ImportError as error:  # the tests skip, saying why
    PIL_ERROR = f"Pillow is not installed ({error}); run .ci/python-tests or pip install Pillow"

try:
    import pillow_heif
    pillow_heif.register_heif_opener()
    HEIF_ERROR: Optional[str] = None
except ImportError as error:
    HEIF_ERROR = f"pillow-heif is not installed ({error}); pip install pillow-heif"

#: Pillow's format names to blobd's (PROTOCOL.md, "Metadata object").
BLOBD_FORMAT = {"PNG": "png", "JPEG": "jpeg", "GIF": "gif", "WEBP": "webp", "BMP": "bmp",
                "TIFF": "tiff", "HEIF": "heic", "AVIF": "avif"}


def _picture(mode: str, size: Tuple[int, int]) -> "Image.Image":
    """A gradient with some detail, so compressed files are not trivially small."""
    width, height = size
    rgb = Image.new("RGB", size)
    rgb.putdata([((x * 255) // max(1, width - 1), (y * 255) // max(1, height - 1), (x * y) % 256)
                 for y in range(height) for x in range(width)])
    if mode == "RGB":
        return rgb
    if mode == "RGBA":
        alpha = Image.new("L", size)
        alpha.putdata([(x + y) % 256 for y in range(height) for x in range(width)])
        out = rgb.copy()
        out.putalpha(alpha)
        return out
    if mode == "P":
        return rgb.quantize(64)
    return rgb.convert(mode)


def _save(image: "Image.Image", format: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=format, **options)
    return out.getvalue()


# PNG ------------------------------------------------------------------------------------------

def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_interlaced(size: Tuple[int, int]) -> bytes:
    """An Adam7-interlaced 8-bit RGB PNG (Pillow reads these but cannot write them)."""
    width, height = size
    image = _picture("RGB", size)
    pixels = image.tobytes()
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
              (0, 1, 1, 2)]
    raw = bytearray()
    for x0, y0, dx, dy in passes:
        columns = range(x0, width, dx)
        if not columns:
            continue
        for y in range(y0, height, dy):
            raw.append(0)  # filter: none
            for x in columns:
                at = (y * width + x) * 3
                raw += pixels[at:at + 3]
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 1)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(bytes(raw))) + _png_chunk(b"IEND", b""))


# BMP ------------------------------------------------------------------------------------------

def bmp_manual(size: Tuple[int, int], bits: int, top_down: bool) -> bytes:
    """A BITMAPINFOHEADER BMP of 4 or 24 bits per pixel, bottom-up or top-down (negative
    height), which Pillow's writer does not offer."""
    width, height = size
    image = _picture("RGB", size)
    stride = ((width * bits + 31) // 32) * 4
    palette = b""
    rows: List[bytes] = []
    if bits == 4:
        quantized = image.quantize(16)
        colors = (quantized.getpalette() or [])[:48]
        colors += [0] * (48 - len(colors))
        palette = b"".join(bytes([colors[i * 3 + 2], colors[i * 3 + 1], colors[i * 3], 0])
                           for i in range(16))
        indexes = quantized.tobytes()
        for y in range(height):
            row = bytearray(stride)
            for x in range(width):
                value = indexes[y * width + x] & 0x0F
                row[x // 2] |= value << (4 if x % 2 == 0 else 0)
            rows.append(bytes(row))
    else:
        data = image.tobytes()
        for y in range(height):
            row = bytearray()
            for x in range(width):
                r, g, b = data[(y * width + x) * 3:(y * width + x) * 3 + 3]
                row += bytes([b, g, r])
            rows.append(bytes(row) + b"\0" * (stride - len(row)))
    if not top_down:
        rows.reverse()
    pixels = b"".join(rows)
    offset = 14 + 40 + len(palette)
    info = struct.pack("<IiiHHIIiiII", 40, width, -height if top_down else height, 1, bits, 0,
                       len(pixels), 2835, 2835, 16 if bits == 4 else 0, 0)
    return b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset) + info + palette + pixels


# HEIF -----------------------------------------------------------------------------------------

def _boxes(data: bytes, start: int = 0, end: Optional[int] = None) -> List[Tuple[bytes, int, int, int]]:
    """Top-level ISO BMFF boxes: (type, offset, header size, total size)."""
    end = len(data) if end is None else end
    out = []
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[at + 8:at + 16])[0]
            header = 16
        elif size == 0:
            size = end - at
        out.append((kind, at, header, size))
        at += size
    return out


def heif_meta_after_mdat(data: bytes) -> Optional[bytes]:
    """Rewrites a HEIF file as ftyp, mdat, meta (legal: ISO/IEC 23008-12 puts no order on them),
    moving every iloc extent offset by the distance mdat moved. None if the file has a layout
    this does not handle (a construction method other than file offsets)."""
    boxes = _boxes(data)
    kinds = [b[0] for b in boxes]
    if kinds[:3] != [b"ftyp", b"meta", b"mdat"] or len(kinds) != 3:
        return None
    ftyp, meta, mdat = boxes
    meta_bytes = bytearray(data[meta[1]:meta[1] + meta[3]])
    shift = -meta[3]  # mdat moves up by meta's size
    # meta is a full box: 4 bytes of version/flags after its header.
    inner = _boxes(bytes(meta_bytes), meta[2] + 4)
    iloc = next((b for b in inner if b[0] == b"iloc"), None)
    if iloc is None:
        return None
    at = iloc[1] + iloc[2]
    version = meta_bytes[at]
    at += 4
    sizes = struct.unpack(">H", meta_bytes[at:at + 2])[0]
    at += 2
    offset_size, length_size = sizes >> 12, (sizes >> 8) & 0xF
    base_offset_size, index_size = (sizes >> 4) & 0xF, sizes & 0xF
    if version < 2:
        count = struct.unpack(">H", meta_bytes[at:at + 2])[0]
        at += 2
    else:
        count = struct.unpack(">I", meta_bytes[at:at + 4])[0]
        at += 4
    for _ in range(count):
        at += 2 if version < 2 else 4  # item id
        if version in (1, 2):
            if struct.unpack(">H", meta_bytes[at:at + 2])[0] & 0xF != 0:
                return None  # not file offsets
            at += 2
        at += 2  # data reference index
        # An extent's file offset is base + extent offset: move the base when there is one.
        moved = False
        if base_offset_size in (4, 8):
            form = ">I" if base_offset_size == 4 else ">Q"
            (base,) = struct.unpack(form, meta_bytes[at:at + base_offset_size])
            if base:
                meta_bytes[at:at + base_offset_size] = struct.pack(form, base + shift)
                moved = True
        at += base_offset_size
        extents = struct.unpack(">H", meta_bytes[at:at + 2])[0]
        at += 2
        for _ in range(extents):
            if version in (1, 2) and index_size:
                at += index_size
            if moved:
                pass
            elif offset_size == 4:
                (value,) = struct.unpack(">I", meta_bytes[at:at + 4])
                meta_bytes[at:at + 4] = struct.pack(">I", value + shift)
            elif offset_size == 8:
                (value,) = struct.unpack(">Q", meta_bytes[at:at + 8])
                meta_bytes[at:at + 8] = struct.pack(">Q", value + shift)
            elif offset_size != 0:
                return None
            at += offset_size + length_size
    return (data[ftyp[1]:ftyp[1] + ftyp[3]] + data[mdat[1]:mdat[1] + mdat[3]]
            + bytes(meta_bytes))


def _box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def _full_box(kind: bytes, version: int, flags: int, payload: bytes) -> bytes:
    return _box(kind, struct.pack(">I", (version << 24) | flags) + payload)


def _heif_parts(data: bytes) -> Tuple[bytes, bytes, bytes, bytes]:
    """(ftyp box, hdlr box, hvcC box, coded image bytes) of a one-image HEIF from pillow-heif."""
    boxes = {kind: (offset, header, size) for kind, offset, header, size in _boxes(data)}
    m_offset, m_header, m_size = boxes[b"meta"]
    meta = data[m_offset:m_offset + m_size]
    inner = {kind: meta[o:o + n] for kind, o, _, n in _boxes(meta, m_header + 4)}
    ipco = next(box for kind, o, h, n in _boxes(inner[b"iprp"], 8) if kind == b"ipco"
                for box in [inner[b"iprp"][o:o + n]])
    props = {kind: ipco[o:o + n] for kind, o, _, n in _boxes(ipco, 8)}
    if b"clap" in props:
        raise ValueError("a tile with a clean aperture cannot be a grid tile")
    iloc = inner[b"iloc"]
    # pillow-heif writes iloc version 0 with 4-byte offset, length and base offset, one item.
    base, _, offset, length = struct.unpack(">IHII", iloc[20:34])
    ftyp_offset, _, ftyp_size = boxes[b"ftyp"]
    return (data[ftyp_offset:ftyp_offset + ftyp_size], inner[b"hdlr"], props[b"hvcC"],
            data[base + offset:base + offset + length])


def heif_grid(columns: int, rows: int, output: Tuple[int, int]) -> bytes:
    """A HEIC whose primary item is a `grid` of columns x rows 64x64 HEVC tiles (as cameras
    write large photos), cropped to ``output`` (ISO/IEC 23008-12, 6.6.2.3). The tiles are encoded
    by pillow-heif; the file around them is built here."""
    tiles = [_heif_parts(_save(_picture("RGB", (64, 64)).rotate(90 * i), "HEIF", quality=60))
             for i in range(columns * rows)]
    ftyp, hdlr = tiles[0][0], tiles[0][1]
    count = len(tiles)
    grid_id = count + 1
    grid_data = struct.pack(">BBBBHH", 0, 0, rows - 1, columns - 1, output[0], output[1])
    ipco = _box(b"ipco", b"".join(t[2] for t in tiles)
                + _full_box(b"ispe", 0, 0, struct.pack(">II", 64, 64))
                + _full_box(b"ispe", 0, 0, struct.pack(">II", *output)))
    tile_ispe, grid_ispe = count + 1, count + 2  # 1-based property indexes
    ipma_entries = b"".join(struct.pack(">HBBB", i + 1, 2, 0x80 | (i + 1), tile_ispe)
                            for i in range(count))
    ipma_entries += struct.pack(">HBB", grid_id, 1, grid_ispe)
    ipma = _full_box(b"ipma", 0, 0, struct.pack(">I", count + 1) + ipma_entries)
    infes = b"".join(_full_box(b"infe", 2, 1, struct.pack(">HH4s", i + 1, 0, b"hvc1") + b"\0")
                     for i in range(count))  # flag 1: hidden (a tile, not an image of its own)
    infes += _full_box(b"infe", 2, 0, struct.pack(">HH4s", grid_id, 0, b"grid") + b"\0")
    iinf = _full_box(b"iinf", 0, 0, struct.pack(">H", count + 1) + infes)
    iref = _full_box(b"iref", 0, 0, _box(b"dimg", struct.pack(">HH", grid_id, count)
                                         + b"".join(struct.pack(">H", i + 1) for i in range(count))))
    pitm = _full_box(b"pitm", 0, 0, struct.pack(">H", grid_id))
    idat = _box(b"idat", grid_data)

    def meta_box(mdat_start: int) -> bytes:
        # iloc version 1: 4-byte offsets and lengths, no base offset, construction methods.
        entries = b""
        at = mdat_start
        for i, tile in enumerate(tiles):
            entries += struct.pack(">HHHHII", i + 1, 0, 0, 1, at, len(tile[3]))
            at += len(tile[3])
        entries += struct.pack(">HHHHII", grid_id, 1, 0, 1, 0, len(grid_data))
        iloc = _full_box(b"iloc", 1, 0, struct.pack(">BBH", 0x44, 0x00, count + 1) + entries)
        return _full_box(b"meta", 0, 0, hdlr + pitm + iloc + iinf + iref + idat
                         + _box(b"iprp", ipco + ipma))

    mdat_payload = b"".join(t[3] for t in tiles)
    start = len(ftyp) + len(meta_box(0)) + 8
    return ftyp + meta_box(start) + _box(b"mdat", mdat_payload)


# Where a file's structure ends --------------------------------------------------------------------

_TIFF_TYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4}


def structural_length(data: bytes) -> int:
    """The length of the file's structure: for a classic TIFF, the end of its last IFD, value or
    strip (Pillow pads multi-page TIFFs after the last strip, and bytes no IFD points at are not
    part of the image); for other files, their length."""
    if data[:4] not in (b"II*\0", b"MM\0*"):
        return len(data)
    order = "<" if data[:2] == b"II" else ">"

    def unpack(form: str, at: int) -> Tuple[int, ...]:
        return struct.unpack(order + form, data[at:at + struct.calcsize(order + form)])

    end = 8
    offset = unpack("I", 4)[0]
    seen = set()
    while offset and offset not in seen:
        seen.add(offset)
        count = unpack("H", offset)[0]
        end = max(end, offset + 2 + 12 * count + 4)
        arrays: Dict[int, List[int]] = {}
        for i in range(count):
            tag, kind, n = unpack("HHI", offset + 2 + 12 * i)
            size = _TIFF_TYPE_SIZES.get(kind, 1) * n
            at = offset + 2 + 12 * i + 8 if size <= 4 else unpack("I", offset + 2 + 12 * i + 8)[0]
            end = max(end, at + size)
            if tag in (273, 279, 324, 325) and kind in (3, 4):  # strip/tile offsets and counts
                arrays[tag] = list(unpack(("H" if kind == 3 else "I") * n, at))
        for offsets, counts in ((273, 279), (324, 325)):
            for start, length in zip(arrays.get(offsets, []), arrays.get(counts, [])):
                end = max(end, start + length)
        offset = unpack("I", offset + 2 + 12 * count)[0]
    return end


# The catalogue ---------------------------------------------------------------------------------

Maker = Callable[[], Optional[bytes]]


def catalogue() -> Dict[str, Tuple[Maker, Optional[str]]]:
    """name -> (maker, reason to skip or None). Makers run lazily (some are slow)."""
    entries: Dict[str, Tuple[Maker, Optional[str]]] = {}

    def add(name: str, maker: Maker, needs: Optional[str] = None) -> None:
        entries[name] = (maker, needs)

    pic = _picture
    # PNG
    add("png_rgb", lambda: _save(pic("RGB", (64, 48)), "PNG"))
    add("png_rgba", lambda: _save(pic("RGBA", (33, 17)), "PNG"))
    add("png_interlaced", lambda: png_interlaced((37, 23)))
    add("png_16bit_gray", lambda: _save(pic("L", (20, 10)).convert("I;16"), "PNG"))
    add("png_palette", lambda: _save(pic("P", (40, 30)), "PNG"))
    add("png_gray_alpha", lambda: _save(pic("RGBA", (12, 9)).convert("LA"), "PNG"))
    add("png_1bit", lambda: _save(pic("L", (19, 5)).convert("1"), "PNG"))
    add("png_1x1", lambda: _save(pic("RGB", (1, 1)), "PNG"))
    add("png_3x7", lambda: _save(pic("RGB", (3, 7)), "PNG"))
    add("png_1000x1", lambda: _save(pic("RGB", (1000, 1)), "PNG"))
    add("png_apng", lambda: _animated("PNG", (24, 16)))
    # JPEG
    add("jpeg_baseline", lambda: _save(pic("RGB", (64, 48)), "JPEG", quality=85))
    add("jpeg_progressive", lambda: _save(pic("RGB", (65, 49)), "JPEG", progressive=True))
    add("jpeg_cmyk", lambda: _save(pic("RGB", (30, 20)).convert("CMYK"), "JPEG"))
    add("jpeg_gray", lambda: _save(pic("L", (31, 7)), "JPEG"))
    add("jpeg_exif", lambda: _jpeg_with_exif())
    add("jpeg_1x1", lambda: _save(pic("RGB", (1, 1)), "JPEG"))
    add("jpeg_odd_subsampled", lambda: _save(pic("RGB", (3, 7)), "JPEG", subsampling=2))
    add("jpeg_444_icc", lambda: _save(pic("RGB", (40, 24)), "JPEG", subsampling=0,
                                      icc_profile=_srgb_profile()))
    add("jpeg_restart_markers", lambda: _save(pic("RGB", (64, 64)), "JPEG",
                                              restart_marker_blocks=2))
    # GIF
    add("gif_static", lambda: _save(pic("P", (40, 30)), "GIF"))
    add("gif_animated", lambda: _animated("GIF", (24, 16)))
    add("gif_1x1", lambda: _save(pic("P", (1, 1)), "GIF"))
    add("gif_interlaced", lambda: _save(pic("P", (40, 30)), "GIF", interlace=True))
    # WebP
    add("webp_lossy", lambda: _save(pic("RGB", (64, 48)), "WEBP", quality=80), "webp")
    add("webp_lossless", lambda: _save(pic("RGB", (63, 47)), "WEBP", lossless=True), "webp")
    add("webp_alpha", lambda: _save(pic("RGBA", (50, 30)), "WEBP", quality=80), "webp")
    add("webp_alpha_lossless", lambda: _save(pic("RGBA", (21, 13)), "WEBP", lossless=True),
        "webp")
    add("webp_animated", lambda: _animated("WEBP", (24, 16)), "webp")
    add("webp_1x1", lambda: _save(pic("RGB", (1, 1)), "WEBP", lossless=True), "webp")
    # BMP
    add("bmp_1bit", lambda: _save(pic("L", (19, 5)).convert("1"), "BMP"))
    add("bmp_4bit", lambda: bmp_manual((13, 6), 4, top_down=False))
    add("bmp_8bit", lambda: _save(pic("L", (21, 9)), "BMP"))
    add("bmp_24bit", lambda: _save(pic("RGB", (31, 17)), "BMP"))
    add("bmp_32bit", lambda: _save(pic("RGBA", (15, 8)), "BMP"))
    add("bmp_top_down", lambda: bmp_manual((11, 7), 24, top_down=True))
    add("bmp_4bit_top_down", lambda: bmp_manual((9, 4), 4, top_down=True))
    # TIFF
    add("tiff_raw_le", lambda: _save(pic("RGB", (40, 30)), "TIFF", compression="raw"))
    add("tiff_raw_be", lambda: _save(pic("L", (40, 30)).convert("I;16B"), "TIFF"))
    add("tiff_lzw", lambda: _save(pic("RGB", (40, 30)), "TIFF", compression="tiff_lzw"),
        "libtiff")
    add("tiff_deflate", lambda: _save(pic("RGB", (40, 30)), "TIFF",
                                      compression="tiff_adobe_deflate"), "libtiff")
    add("tiff_packbits", lambda: _save(pic("L", (40, 30)), "TIFF", compression="packbits"),
        "libtiff")
    add("tiff_bigtiff", lambda: _save(pic("RGB", (40, 30)), "TIFF", big_tiff=True))
    add("tiff_big_raw", lambda: _save(pic("RGB", (700, 600)), "TIFF", compression="raw"))
    add("tiff_big_lzw", lambda: _save(_noise((800, 700)), "TIFF", compression="tiff_lzw"),
        "libtiff")
    add("tiff_multipage", lambda: _animated("TIFF", (20, 10)))
    add("tiff_jpeg", lambda: _save(pic("RGB", (48, 32)), "TIFF", compression="jpeg"), "libtiff")
    add("tiff_cmyk", lambda: _save(pic("RGB", (20, 10)).convert("CMYK"), "TIFF"))
    # HEIF family
    add("heic", lambda: _save(pic("RGB", (64, 48)), "HEIF", quality=60), "heif")
    add("heic_alpha", lambda: _save(pic("RGBA", (33, 17)), "HEIF", quality=60), "heif")
    add("heic_odd", lambda: _save(pic("RGB", (3, 7)), "HEIF", quality=60), "heif")
    add("heic_rotated", lambda: _heic_rotated(), "heif")
    add("heic_meta_after_mdat", lambda: heif_meta_after_mdat(
        _save(pic("RGB", (64, 48)), "HEIF", quality=60)), "heif")
    add("heic_big_meta_after_mdat", lambda: heif_meta_after_mdat(
        _save(_noise((640, 480)), "HEIF", quality=90)), "heif")
    add("heic_grid_2x2", lambda: heif_grid(2, 2, (120, 100)), "heif")
    add("heic_grid_3x1", lambda: heif_grid(3, 1, (192, 64)), "heif")
    add("avif", lambda: _save(pic("RGB", (64, 48)), "AVIF", quality=60), "avif")
    add("avif_alpha", lambda: _save(pic("RGBA", (33, 17)), "AVIF", quality=60), "avif")
    add("avif_animated", lambda: _animated("AVIF", (24, 16)), "avif")
    return entries


def _noise(size: Tuple[int, int]) -> "Image.Image":
    import random
    rng = random.Random(7)
    width, height = size
    return Image.frombytes("RGB", size, bytes(rng.getrandbits(8) for _ in range(width * height * 3)))


def _animated(format: str, size: Tuple[int, int]) -> bytes:
    frames = [_picture("RGB", size).rotate(angle) for angle in (0, 90, 180)]
    if format == "GIF":
        frames = [f.quantize(32) for f in frames]
    return _save(frames[0], format, save_all=True, append_images=frames[1:], duration=100,
                 loop=0)


def _heic_rotated() -> bytes:
    """A 64x32 picture stored with EXIF orientation 6: pillow-heif writes an `irot` (90°), so the
    image as displayed, and as Pillow reports it, is 32x64."""
    exif = Image.Exif()
    exif[0x0112] = 6
    return _save(_picture("RGB", (64, 32)), "HEIF", quality=60, exif=exif.tobytes())


def _srgb_profile() -> bytes:
    from PIL import ImageCms
    return ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()


def _jpeg_with_exif() -> bytes:
    exif = Image.Exif()
    exif[0x010F] = "BlobStore test camera"  # Make
    exif[0x0112] = 6  # Orientation: rotated; the stored size is still width x height
    return _save(_picture("RGB", (48, 32)), "JPEG", exif=exif.tobytes())


def missing_feature(needs: Optional[str]) -> Optional[str]:
    """Why a maker cannot run here, or None."""
    if PIL_ERROR:
        return PIL_ERROR
    if needs == "heif":
        return HEIF_ERROR
    if needs in ("webp", "libtiff", "avif") and not features.check(needs):
        return f"this Pillow has no {needs} support"
    return None


def pillow_answer(data: bytes) -> Tuple[str, int, int]:
    """(blobd format name, width, height) as Pillow reads the file."""
    with Image.open(io.BytesIO(data)) as image:
        return BLOBD_FORMAT[image.format or ""], image.size[0], image.size[1]
