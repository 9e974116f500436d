"""--docs 的文件：在用户给的文件夹里找出要读的文件（只看文件的元数据），以及读一个文件的唯一入口（read_bytes）。

文件夹里的东西只读不写。找文件时：
- 隐藏的文件和文件夹（.git、.obsidian……）、node_modules、__pycache__ 不看；
- 只看认得的扩展名（FORMATS），别的不打开，只在汇总里数一下；
- 符号链接：指向文件夹里面的照常跟着走（同一个文件夹只走一次，链接成环也不会转圈）；指向文件夹外面的不跟，说一句
  （用户给的是这个文件夹，链接出去的可能是整个家目录）；
- 命名管道、设备文件之类不是普通文件的，不打开就跳过（打开命名管道会一直等）；
- 超过 MAX_FILE_BYTES 的文件不读（不会读进内存），说一句；
- 文件名不是 UTF-8 的（GBK 编码的文件名）不读也不进去，说一句怎么改名。
"""
import os
import stat
from dataclasses import dataclass
from pathlib import Path

# 认得的扩展名 → 格式
FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".html": "html", ".htm": "html",
           ".pdf": "pdf", ".docx": "docx"}
# 一个文件最多这么大才读（20 MB）：笔记、网页、报告都远小于它；更大的多半是导出的数据或扫描件，读进来也只会拖慢索引
MAX_FILE_BYTES = 20 * 1024 * 1024
SKIPPED_FOLDERS = {"node_modules", "__pycache__"}


@dataclass(frozen=True)
class Found:
    """找到的一个要读的文件：path 是真实的路径，relative 是相对用户给的文件夹的写法（用 / 分隔），
    size、mtime_ns、inode 用来判断上次读过以后变了没有。"""
    path: Path
    relative: str
    size: int
    mtime_ns: int
    inode: int

    @property
    def format(self) -> str:
        return FORMATS[Path(self.relative).suffix.lower()]


@dataclass
class Scan:
    """找一遍的结果：要读的文件、跳过的说明（一行一条）、不认得的文件有几个。"""
    found: list[Found]
    notes: list[str]
    ignored: int = 0


def too_large_note(relative: str, size: int) -> str:
    return f"{relative} 有 {size / 1024 / 1024:.0f} MB，超过 {MAX_FILE_BYTES // 1024 // 1024} MB 的上限，没有读"


def scan(root: Path) -> Scan:
    """找出 root（用户给的一个文件夹或一个文件，已经是绝对路径）下面要读的文件。只 stat，不打开任何文件。"""
    result = Scan([], [])
    try:
        info = root.stat()
    except OSError as error:
        result.notes.append(f"{root} 打不开（{error.strerror or error}），跳过")
        return result
    if stat.S_ISDIR(info.st_mode):
        real_root = root.resolve()
        walk(root, real_root, "", {(info.st_dev, info.st_ino)}, result)
    elif stat.S_ISREG(info.st_mode) and not encodable(root.name):
        result.notes.append(not_utf8_note(root.name))
    elif stat.S_ISREG(info.st_mode):
        add_file(root, root.name, info, result)
    else:
        result.notes.append(f"{root} 不是普通文件也不是文件夹，跳过")
    return result


def add_file(path: Path, relative: str, info: os.stat_result, result: Scan) -> None:
    if Path(relative).suffix.lower() not in FORMATS:
        result.ignored += 1
        return
    if info.st_size > MAX_FILE_BYTES:
        result.notes.append(too_large_note(relative, info.st_size))
        return
    result.found.append(Found(path, relative, info.st_size, info.st_mtime_ns, info.st_ino))


def entries(folder: Path, relative: str, result: Scan) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return sorted(listing, key=lambda entry: entry.name)
    except OSError as error:
        result.notes.append(f"{relative or '.'}/ 打不开（{error.strerror or error}），跳过")
        return []


def walk(folder: Path, real_root: Path, relative: str, seen: set[tuple[int, int]], result: Scan) -> None:
    """深度优先地走一个文件夹（用栈，不递归：很深的文件夹也不会超过 Python 的递归上限）。"""
    stack: list[tuple[Path, str]] = [(folder, relative)]
    while stack:
        current, prefix = stack.pop()
        for entry in reversed(entries(current, prefix, result)):
            name = entry.name
            if name.startswith(".") or name in SKIPPED_FOLDERS:
                continue
            path = Path(entry.path)
            child = f"{prefix}{name}"
            if not encodable(name):
                result.notes.append(not_utf8_note(child))
                continue
            try:
                is_link = entry.is_symlink()
                info = path.stat()  # 跟着符号链接
            except OSError as error:
                reason = "符号链接指向的地方不存在或成环" if is_link_safe(entry) else (error.strerror or str(error))
                result.notes.append(f"{child} 打不开（{reason}），跳过")
                continue
            if is_link and not inside(path, real_root):
                result.notes.append(f"{child} 是指向文件夹外面的符号链接，没有跟过去")
                continue
            if stat.S_ISDIR(info.st_mode):
                if (info.st_dev, info.st_ino) in seen:
                    if is_link:
                        result.notes.append(f"{child} 是指向已经读过的文件夹的符号链接（可能成环），跳过")
                    continue
                seen.add((info.st_dev, info.st_ino))
                stack.append((path, f"{child}/"))
            elif stat.S_ISREG(info.st_mode):
                add_file(path, child, info, result)
            elif Path(name).suffix.lower() in FORMATS:
                result.notes.append(f"{child} 不是普通文件（命名管道、设备之类），没有打开")


def not_utf8_note(relative: str) -> str:
    return (f"{relative} 的文件名不是 UTF-8 编码（多半是 GBK），跳过：改成 UTF-8 的文件名就能读"
            "（例如 convmv -f gbk -t utf-8 -r --notest 文件夹）")


def encodable(name: str) -> bool:
    """文件名是不是 UTF-8：不是的（GBK 的文件名）在 Python 里带着代理码位，存不进索引、也写不进输出。"""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_link_safe(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def inside(path: Path, real_root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(real_root)
    except (OSError, RuntimeError):
        return False


def read_bytes(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """读一个文件的全部字节：--docs 读文件只经过这里（测试数它被调用了几次）。不阻塞地打开、确认是普通文件再读
    （找文件和读文件之间它可能被换成了命名管道），最多读 limit 个字节，再多就报错（OSError）。"""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "不是普通文件")
        if info.st_size > limit:
            raise OSError(0, f"超过 {limit // 1024 // 1024} MB 的上限")
        chunks = []
        total = 0
        while chunk := os.read(descriptor, 1024 * 1024):
            total += len(chunk)
            if total > limit:
                raise OSError(0, f"超过 {limit // 1024 // 1024} MB 的上限")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


class NotText(ValueError):
    """文件不是文字（有 NUL 字节、哪种编码都解不开）。"""


def decode(data: bytes) -> str:
    """按顺序试：UTF-8（可以带 BOM）、带 BOM 的 UTF-16、GB18030（中文笔记里常见，GBK、GB2312 是它的子集）。"""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as error:
            raise NotText("有 UTF-16 的标记，却不是 UTF-16 文字") from error
    if b"\x00" in data:
        raise NotText("有 NUL 字节，像是二进制文件")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030")
    except UnicodeDecodeError as error:
        raise NotText("不是 UTF-8、UTF-16 或 GB18030 编码的文字") from error

