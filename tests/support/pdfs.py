"""Small PDFs made in the tests: hand-written, with Helvetica text (no PDF library needed)."""

from __future__ import annotations


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str]) -> bytes:
    """A valid PDF with one page per string (an empty string gives a page with no text)."""
    objects: list[bytes] = []
    count = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(count))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode())
    font = 3 + 2 * count
    for i, text in enumerate(pages):
        lines = "".join(
            f"BT /F1 12 Tf 72 {720 - 16 * n} Td ({_escape(line)}) Tj ET\n"
            for n, line in enumerate(text.splitlines())
        ).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(lines) + lines + b"endstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def encrypt_pdf(data: bytes, password: str = "secret") -> bytes:
    """*data* encrypted with a user password (pypdf, a test dependency)."""
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=password, algorithm="AES-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _pdf(objects: list[bytes]) -> bytes:
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def make_xobject_bomb(levels: int = 8, fanout: int = 10) -> bytes:
    """A tiny PDF whose page draws a form XObject that draws the next one *fanout* times,
    *levels* deep, the last drawing text: fanout**levels text objects for PDFium to expand
    (8 levels of 10: a 2 KB file that costs gigabytes)."""
    # 1 catalog, 2 pages, 3 page, 4 page contents, 5 font, 6.. the forms
    first = 6
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> /XObject << /X 6 0 R >> >> >>",
    ]
    page = b"q /X Do Q\n"
    objects.append(b"<< /Length %d >>\nstream\n" % len(page) + page + b"endstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for level in range(levels):
        if level == levels - 1:
            content = b"BT /F1 12 Tf 72 700 Td (bomb text here) Tj ET\n"
            resources = b"<< /Font << /F1 5 0 R >> >>"
        else:
            content = b"q /X Do Q\n" * fanout
            resources = b"<< /Font << /F1 5 0 R >> /XObject << /X %d 0 R >> >>" % (
                first + level + 1
            )
        objects.append(
            b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources "
            + resources
            + b" /Length %d >>\nstream\n" % len(content)
            + content
            + b"endstream"
        )
    return _pdf(objects)


def make_flate_text_bomb(operators: int = 2_000_000) -> bytes:
    """A PDF whose one page is a Flate-compressed stream of *operators* text-showing
    operators: small on the wire, very large once PDFium lays the text out."""
    import zlib

    content = b"BT /F1 1 Tf " + b"(ab) Tj " * operators + b"ET\n"
    packed = zlib.compress(content, 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return _pdf(objects)


def make_slow_pdf(pages: int = 60, operators: int = 100_000) -> bytes:
    """A small PDF that is slow to read but not large in memory: *pages* pages, each a
    Flate-compressed stream of *operators* text-showing operators (each page is laid out and
    freed in turn: about 0.35 s a page for 100,000 operators here)."""
    import zlib

    content = b"BT /F1 1 Tf " + b"(ab) Tj " * operators + b"ET\n"
    packed = zlib.compress(content, 9)
    font = 3 + 2 * pages
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
    ]
    for i in range(pages):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed)
            + packed
            + b"\nendstream"
        )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return _pdf(objects)
