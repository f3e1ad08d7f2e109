#!/usr/bin/env bash
# Regenerates the real-image fixtures that ImageHeaderParserTests parses.
# Not run by CI: the committed files are the fixtures; this records how they were made.
# Needs Debian's imagemagick, webp and libheif-examples, plus python3 (standard library only).
set -euo pipefail
cd "$(dirname "$0")"

CONVERT=/usr/bin/convert   # the real ImageMagick, not any wrapper earlier in PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Smooth sources compress well, which keeps every fixture under 20 KB; odd sizes catch
# width/height mix-ups and off-by-one rounding that even sizes would hide.
source_image() { # WIDTH HEIGHT OUT
    "$CONVERT" -size "$1x$2" gradient:'#2060c0-#f0a030' \
        -fill '#ffffff80' -draw "circle $(($1/2)),$(($2/2)) $(($1/2)),$(($2/4))" \
        -strip -depth 8 "PNG24:$3"
}
source_image 317 211 "$work/a.png"
source_image 3 500   "$work/tall.png"
"$CONVERT" -size 1x1 xc:'#3080ff' -strip -depth 8 "PNG24:$work/dot.png"
"$CONVERT" "$work/a.png" -alpha set -channel A -fx 'i/w' +channel -strip -depth 8 "PNG32:$work/alpha.png"

# PNG
"$CONVERT" "$work/a.png" -strip -define png:compression-level=9 png-317x211.png
cp "$work/dot.png" png-1x1.png
"$CONVERT" "$work/tall.png" -strip png-3x500.png

# JPEG: baseline, progressive, and one whose SOF sits behind a large EXIF APP1 block.
"$CONVERT" "$work/a.png" -strip -quality 60 jpeg-317x211.jpg
"$CONVERT" "$work/a.png" -strip -quality 60 -interlace JPEG jpeg-progressive-317x211.jpg
"$CONVERT" "$work/dot.png" -strip jpeg-1x1.jpg
"$CONVERT" "$work/tall.png" -strip -quality 60 jpeg-3x500.jpg
python3 - jpeg-317x211.jpg jpeg-exif-317x211.jpg <<'PY'
# Inserts an APP1 Exif segment (~9 KB: a big ImageDescription, plus PixelXDimension-style
# decoys of the wrong size) right after SOI, so a parser must skip it by length to reach SOF.
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
assert data[:2] == b"\xff\xd8"
desc = (b"fixture: SOF must be found after this block. " * 200)[:9000] + b"\0"
entries = [
    (0x010E, 2, len(desc), None),          # ImageDescription -> offset to desc
    (0x0100, 4, 1, 4096),                   # ImageWidth decoy: EXIF is not the frame
    (0x0101, 4, 1, 4096),                   # ImageLength decoy
    (0x0112, 3, 1, 1),                      # Orientation
]
ifd_off = 8
ifd_size = 2 + 12 * len(entries) + 4
desc_off = ifd_off + ifd_size
tiff = bytearray(b"MM\x00\x2a" + struct.pack(">I", ifd_off))
tiff += struct.pack(">H", len(entries))
for tag, typ, count, value in entries:
    if value is None:
        tiff += struct.pack(">HHII", tag, typ, count, desc_off)
    elif typ == 3:
        tiff += struct.pack(">HHIHH", tag, typ, count, value, 0)
    else:
        tiff += struct.pack(">HHII", tag, typ, count, value)
tiff += struct.pack(">I", 0)
tiff += desc
payload = b"Exif\0\0" + bytes(tiff)
segment = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
open(dst, "wb").write(data[:2] + segment + data[2:])
PY

# GIF (ImageMagick writes GIF89a; the GIF87 coder writes the older signature).
"$CONVERT" "$work/a.png" -colors 32 gif-317x211.gif
"$CONVERT" "$work/dot.png" GIF87:gif87a-1x1.gif
"$CONVERT" "$work/tall.png" gif-3x500.gif

# WebP: lossy (VP8), lossless (VP8L), extended (VP8X: alpha; and one with EXIF via webpmux).
cwebp -quiet -q 50 "$work/a.png" -o webp-lossy-317x211.webp
cwebp -quiet -lossless "$work/a.png" -o webp-lossless-317x211.webp
cwebp -quiet -q 50 "$work/alpha.png" -o webp-extended-alpha-317x211.webp
printf 'Exif\0\0MM\0*\0\0\0\10\0\0\0\0\0\0' > "$work/exif.bin"
cwebp -quiet -lossless "$work/dot.png" -o "$work/dot.webp"
webpmux -set exif "$work/exif.bin" "$work/dot.webp" -o webp-extended-exif-1x1.webp
cwebp -quiet -q 50 "$work/tall.png" -o webp-lossy-3x500.webp
cwebp -quiet -lossless "$work/tall.png" -o webp-lossless-3x500.webp

# BMP: 1-bit to stay small. BMP3 writes BITMAPINFOHEADER (bottom-up); BMP2 writes the
# 12-byte BITMAPCOREHEADER. No encoder here writes top-down, so flip rows and negate height.
"$CONVERT" "$work/a.png" -monochrome BMP3:bmp-317x211.bmp
"$CONVERT" "$work/tall.png" -monochrome BMP2:bmp-core-3x500.bmp
"$CONVERT" "$work/dot.png" BMP3:bmp-1x1.bmp
python3 - bmp-317x211.bmp bmp-topdown-317x211.bmp <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
offset, = struct.unpack_from("<I", data, 10)
header, width, height, planes, bpp, compression = struct.unpack_from("<IiiHHI", data, 14)
assert header >= 40 and height > 0 and compression == 0
stride = ((width * bpp + 31) // 32) * 4
rows = [data[offset + i * stride: offset + (i + 1) * stride] for i in range(height)]
data[offset: offset + stride * height] = b"".join(reversed(rows))
struct.pack_into("<i", data, 22, -height)
open(sys.argv[2], "wb").write(data)
PY

# TIFF, both byte orders, deflate-compressed to stay small.
"$CONVERT" "$work/a.png" -compress zip -define tiff:endian=lsb tiff-le-317x211.tif
"$CONVERT" "$work/a.png" -compress zip -define tiff:endian=msb tiff-be-317x211.tif
"$CONVERT" "$work/tall.png" -compress zip -define tiff:endian=msb tiff-be-3x500.tif

# HEIC (x265) and AVIF (aom) through libheif.
heif-enc -q 30 "$work/a.png" -o heic-317x211.heic
heif-enc -q 30 "$work/tall.png" -o heic-3x500.heic
heif-enc -A -q 30 "$work/a.png" -o avif-317x211.avif
heif-enc -A -q 30 "$work/dot.png" -o avif-1x1.avif

# Layouts the encoders above do not produce (animation, restart markers, several IFDs, palette and 16-bit
# PNGs), from Pillow 13 (pip; AVIF through its bundled libavif). The whole-file validator's tests use them.
python3 - <<'PY'
from PIL import Image, ImageDraw
def source(w, h):
    im = Image.new("RGB", (w, h))
    d = ImageDraw.Draw(im)
    for x in range(w):
        d.line([(x, 0), (x, h)], fill=(x * 255 // (w - 1), 80, 255 - x * 255 // (w - 1)))
    d.ellipse([w // 4, h // 4, 3 * w // 4, 3 * h // 4], fill=(250, 250, 250))
    return im
a = source(61, 37)
frames = [a.rotate(i * 30) for i in range(3)]
a.convert("P", palette=Image.ADAPTIVE, colors=16).save("png-palette-61x37.png", transparency=0)
Image.new("I;16", (61, 37), 1234).save("png-16bit-61x37.png")
a.convert("LA").save("png-greyalpha-61x37.png")
a.save("jpeg-restart-61x37.jpg", quality=70, restart_marker_blocks=1)
a.save("jpeg-progressive-restart-61x37.jpg", quality=70, progressive=True, restart_marker_rows=1)
frames[0].save("gif-animated-61x37.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)
frames[0].save("webp-animated-61x37.webp", save_all=True, append_images=frames[1:], duration=100, loop=0, quality=50)
a.save("tiff-lzw-61x37.tif", compression="tiff_lzw")
frames[0].save("tiff-multipage-61x37.tif", save_all=True, append_images=frames[1:], compression="tiff_deflate")
a.save("avif-pillow-61x37.avif", quality=50)
a.convert("RGBA").save("webp-alpha-lossless-61x37.webp", lossless=True, exif=b"Exif\x00\x00MM\x00*\x00\x00\x00\x08\x00\x00")
a.save("bmp-rgb24-61x37.bmp")
PY

ls -l
