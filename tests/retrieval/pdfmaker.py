"""A tiny PDF writer for the tests: pages of Helvetica text lines, nothing else (no reportlab)."""

from __future__ import annotations

from collections.abc import Sequence


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(
    pages: Sequence[Sequence[str]],
    title: str | None = None,
    outline: Sequence[tuple[int, str, int]] = (),
) -> bytes:
    """A valid PDF with one page per item, each a list of text lines (an empty list: a page
    without text). `outline`: bookmarks as (level from 1, title, 1-based page) in order."""
    count = len(pages)
    font = 3 + 2 * count  # object numbers: 1 catalog, 2 pages, then page + content pairs, font
    info = font + 1
    outlines = info + 1 if outline else None  # then the outline root and its items
    catalog = f" /Outlines {outlines} 0 R" if outline else ""
    objects: list[bytes] = [
        f"<< /Type /Catalog /Pages 2 0 R{catalog} >>".encode(),
        (
            "<< /Type /Pages /Kids ["
            + " ".join(f"{3 + 2 * i} 0 R" for i in range(count))
            + f"] /Count {count} >>"
        ).encode(),
    ]
    for i, lines in enumerate(pages):
        ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
        ops += [f"({_escape(line)}) Tj T*" for line in lines]
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(
            (
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 {font} 0 R >> >> /Contents {4 + 2 * i} 0 R >>"
            ).encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects.append(f"<< /Title ({_escape(title or '')}) >>".encode("latin-1"))
    if outlines is not None:
        objects += _outline_objects(outline, outlines)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R"
    trailer += f" /Info {info} 0 R >>" if title else " >>"
    out += trailer.encode() + b"\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def _outline_objects(outline: Sequence[tuple[int, str, int]], root: int) -> list[bytes]:
    """The outline root (object `root`) and one object per bookmark after it, linked as the PDF
    format wants: parent, first/last child, previous/next sibling, a destination page."""
    parents: list[int] = []  # for each bookmark, its parent's object number
    stack = [(0, root)]  # (level, object) of the open ancestors
    for number, (level, _, _) in enumerate(outline, root + 1):
        while stack[-1][0] >= level:
            stack.pop()
        parents.append(stack[-1][1])
        stack.append((level, number))
    numbers = range(root + 1, root + 1 + len(outline))
    children: dict[int, list[int]] = {}
    for number, parent in zip(numbers, parents, strict=True):
        children.setdefault(parent, []).append(number)

    def links(number: int) -> str:
        kids = children.get(number, [])
        return f" /First {kids[0]} 0 R /Last {kids[-1]} 0 R /Count {len(kids)}" if kids else ""

    objects = [f"<< /Type /Outlines{links(root)} >>".encode()]
    for number, parent, (_, text, page) in zip(numbers, parents, outline, strict=True):
        siblings = children[parent]
        at = siblings.index(number)
        near = f" /Prev {siblings[at - 1]} 0 R" if at else ""
        near += f" /Next {siblings[at + 1]} 0 R" if at + 1 < len(siblings) else ""
        destination = f"[{1 + 2 * page} 0 R /Fit]"  # page objects: 3, 5, 7, …
        objects.append(
            f"<< /Title ({_escape(text)}) /Parent {parent} 0 R{near}{links(number)} "
            f"/Dest {destination} >>".encode("latin-1")
        )
    return objects
