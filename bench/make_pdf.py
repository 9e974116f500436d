"""写一个最小的 PDF（只用标准库）：每页几行字，中文英文都行。给 --docs 的测试和标注的笔记集用。

字体是不嵌入字形的 Type0（Identity-H，每个字的编号就是它的 Unicode 码位），带 ToUnicode 表：阅读器可能显示不出字形，
但 pypdf 这类抽取文字的程序照表读出原字——--docs 要的正是抽出来的文字。只支持基本多文种平面里的字。
"""
from pathlib import Path


def to_unicode_cmap(codes: list[int]) -> bytes:
    pairs = "\n".join(f"<{code:04X}> <{code:04X}>" for code in codes)
    return (f"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
            f"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
            f"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
            f"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
            f"{len(codes)} beginbfchar\n{pairs}\nendbfchar\nendcmap\n"
            f"CMapName currentdict /CMap defineresource pop\nend\nend\n").encode("ascii")


def page_stream(lines: list[str]) -> bytes:
    parts = ["BT", "/F1 11 Tf", "14 TL", "50 800 Td"]
    for line in lines:
        parts.append(f"<{''.join(f'{ord(char):04X}' for char in line)}> Tj T*")
    parts.append("ET")
    return "\n".join(parts).encode("ascii")


def simple_pdf(pages: list[list[str]]) -> bytes:
    """pages：每页的几行字。"""
    codes = sorted({ord(char) for page in pages for line in page for char in line if ord(char) < 0x10000})
    objects: list[bytes] = []  # 第 n 个对象（从 1 数）
    font, descendant, cmap = 3, 4, 5
    first_page = 6
    kids = " ".join(f"{first_page + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(f"<< /Type /Font /Subtype /Type0 /BaseFont /NotesFont /Encoding /Identity-H "
                   f"/DescendantFonts [{descendant} 0 R] /ToUnicode {cmap} 0 R >>".encode())
    objects.append(b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /NotesFont /CIDToGIDMap /Identity "
                   b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 >>")
    cmap_data = to_unicode_cmap(codes)
    objects.append(f"<< /Length {len(cmap_data)} >>\nstream\n".encode() + cmap_data + b"\nendstream")
    for index, lines in enumerate(pages):
        content = page_stream(lines)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents {first_page + 2 * index + 1} "
                       f"0 R /Resources << /Font << /F1 {font} 0 R >> >> >>".encode())
        objects.append(f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    table = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{table}\n%%EOF\n".encode()
    return bytes(out)


def write_pdf(path: Path, pages: list[list[str]]) -> None:
    path.write_bytes(simple_pdf(pages))
