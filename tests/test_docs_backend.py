"""本地文档这个后端（--docs）：索引放在缓存目录、文件夹里什么都不写、没变的文件夹一个文件也不读、来源的标题和链接
按约定给出（relative 时哪里都没有绝对路径）、坏的输入说一句再往下走、什么都没有时是用法错误（退出码 2）。"""
import os
import stat
from pathlib import Path

import pytest

from bench.make_pdf import write_pdf
from sourced_answers.core.errors import DocsError, ExitCode
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import SearchSettings
from sourced_answers.search import docs_backend, docs_folder
from sourced_answers.search.backend import BACKENDS, Shared, open_backend
from sourced_answers.search.docs_backend import DocsBackend
from sourced_answers.search.docs_files import MAX_FILE_BYTES
from sourced_answers.search.gather import SourceSession, gather

RAID = "# 存储\n\n## RAID 重建\n\nRAID 5 换盘以后重建花了 19 个小时，\n期间阵列是降级状态。\n\n## 快照\n\nZFS 快照几乎不占空间。\n"


@pytest.fixture
def notes(tmp_path) -> Path:
    folder = tmp_path / "notes"
    (folder / "storage").mkdir(parents=True)
    (folder / "storage" / "raid.md").write_text(RAID, encoding="utf-8")
    (folder / "cooking.txt").write_text("可乐鸡翅\n\n可乐本身有糖，不用再放糖。\n", encoding="utf-8")
    (folder / "router.html").write_text("<html><head><title>x</title><script>var secret = 1</script></head><body>"
                                        "<h1>Router</h1><p>The VLAN for cameras is 20.</p></body></html>",
                                        encoding="utf-8")
    return folder


def settings(tmp_path, *docs, **changes) -> SearchSettings:
    return SearchSettings(docs=tuple(str(path) for path in docs), cache_dir=tmp_path / "cache",
                          **changes)


def opened(search, log=None, shared=None) -> DocsBackend:
    return DocsBackend(search, (log if log is not None else []).append, Deadline(None), shared)


class Reads:
    """数读了几个文件：--docs 读文件只经过 read_bytes。"""

    def __init__(self, monkeypatch):
        self.paths: list[str] = []
        original = docs_folder.read_bytes
        monkeypatch.setattr(docs_folder, "read_bytes", lambda path, *rest: self.paths.append(path.name) or
                            original(path, *rest))


def snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    return {str(path): (path.read_bytes() if path.is_file() else b"", path.stat().st_mtime_ns,
                        stat.S_IMODE(path.stat().st_mode)) for path in [folder, *folder.rglob("*")]}


def test_a_two_character_chinese_word_finds_its_passage_with_path_heading_and_lines(tmp_path, notes):
    backend = opened(settings(tmp_path, notes))
    hits, age = backend.search("重建要多久", 3)
    assert age is None
    first = hits[0]
    assert first.title == "storage/raid.md:5-6 · RAID 重建"
    assert first.link == f"{(notes / 'storage' / 'raid.md').as_uri()}#L5-6"
    assert first.text == "RAID 5 换盘以后重建花了 19 个小时，\n期间阵列是降级状态。"
    assert len(first.date) == 10 and first.date.startswith("20")
    assert backend.read(first, 1000) == (first.text, None)
    backend.close()


def test_relative_links_carry_no_absolute_path_and_still_read(tmp_path, notes):
    backend = opened(settings(tmp_path, notes, docs_links="relative"))
    hits, _ = backend.search("VLAN cameras", 2)
    assert hits[0].title == "router.html:1 · Router" and hits[0].link == "notes/router.html:1"
    assert "secret" not in hits[0].text  # script 里的字看不见
    assert backend.read(hits[0], 100)[0] == "The VLAN for cameras is 20."
    backend.close()


@pytest.mark.parametrize("links", ["file", "relative"])
def test_gather_gives_sources_that_follow_the_contract(tmp_path, notes, links):
    search = settings(tmp_path, notes, docs_links=links)
    with SourceSession(search, lambda message: None, Deadline(None), ()) as session:
        sources = session.gather("RAID 重建花了多久")
    assert sources[0].title.startswith("storage/raid.md:5-6") and sources[0].read
    every_field = repr([vars(source) for source in sources])
    if links == "relative":
        assert str(tmp_path) not in every_field and "file:" not in every_field
        assert sources[0].link == "notes/storage/raid.md:5-6"
    else:
        assert sources[0].link.startswith("file:///")


def test_the_backend_is_registered_and_opened_by_name(tmp_path, notes):
    assert BACKENDS["docs"].label == "本地文档" and BACKENDS["docs"].unit == "段落"
    backend = open_backend(settings(tmp_path, notes), lambda message: None, Deadline(None))
    assert isinstance(backend, DocsBackend)
    backend.close()
    hits = gather("可乐鸡翅放糖吗", settings(tmp_path, notes, size=2), backend := opened(settings(tmp_path, notes)),
                  lambda message: None)
    assert hits[0].title == "cooking.txt:1-3"
    backend.close()


def test_a_single_file_is_named_by_itself(tmp_path, notes):
    backend = opened(settings(tmp_path, notes / "storage" / "raid.md", docs_links="relative"))
    hits, _ = backend.search("快照", 1)
    assert hits[0].title == "raid.md:10 · 快照" and hits[0].link == "raid.md:10"
    backend.close()


def test_the_index_lives_in_the_cache_and_the_folder_is_never_written(tmp_path, notes):
    before = snapshot(notes)
    for path in [notes, *notes.rglob("*")]:
        path.chmod(stat.S_IMODE(path.stat().st_mode) & ~0o222)
    read_only = snapshot(notes)
    try:
        opened(settings(tmp_path, notes)).close()
        opened(settings(tmp_path, notes)).close()
        assert snapshot(notes) == read_only
    finally:
        for path in [notes, *notes.rglob("*")]:
            path.chmod(stat.S_IMODE(path.stat().st_mode) | 0o200)
    assert {name: (data, mtime) for name, (data, mtime, _) in snapshot(notes).items()} == \
        {name: (data, mtime) for name, (data, mtime, _) in before.items()}
    index_folder = tmp_path / "cache" / "docs"
    [index] = index_folder.iterdir()
    assert index.suffix == ".sqlite3"
    assert stat.S_IMODE(index_folder.stat().st_mode) == 0o700 and stat.S_IMODE(index.stat().st_mode) == 0o600


def test_an_unchanged_folder_reads_no_file_and_a_change_reads_only_that_file(tmp_path, notes, monkeypatch):
    opened(settings(tmp_path, notes)).close()
    reads = Reads(monkeypatch)
    opened(settings(tmp_path, notes)).close()
    assert reads.paths == []
    (notes / "cooking.txt").write_text("红烧肉要加开水炖。\n", encoding="utf-8")
    (notes / "router.html").unlink()
    log: list[str] = []
    backend = opened(settings(tmp_path, notes), log)
    assert reads.paths == ["cooking.txt"]
    assert backend.search("开水", 1)[0][0].title == "cooking.txt:1"
    assert backend.search("VLAN", 1)[0] == []
    assert "本地文档 notes：2 个文件，3 段" in log
    backend.close()


def test_a_server_keeps_the_index_open_and_sees_an_edited_note_once_the_rescan_interval_passed(tmp_path, notes,
                                                                                              monkeypatch):
    """服务里索引只开一次；请求开始时离上一次看文件夹不到 RESCAN_SECONDS 秒就不再 stat（问题不等它），过了就看，
    改过的笔记这时搜得到。时钟由测试拨（不睡）。"""
    from sourced_answers.search.docs_backend import RESCAN_SECONDS
    opens, now = [], [1000.0]
    original = docs_folder.Index
    monkeypatch.setattr(docs_folder, "Index", lambda path: opens.append(path) or original(path))
    monkeypatch.setattr(docs_folder.time, "monotonic", lambda: now[0])
    with Shared() as shared:
        first = opened(settings(tmp_path, notes), shared=shared)
        assert first.search("鸡翅", 1)[0][0].text.startswith("可乐")
        first.close()  # 一次回答用完：共用的索引不关
        (notes / "cooking.txt").write_text("鸡翅用烤箱 200 度烤 20 分钟。\n", encoding="utf-8")
        now[0] += RESCAN_SECONDS / 2
        second = opened(settings(tmp_path, notes), shared=shared)
        assert second.search("鸡翅", 1)[0][0].text.startswith("可乐")  # 刚看过：这次不再看
        second.close()
        now[0] += RESCAN_SECONDS
        third = opened(settings(tmp_path, notes), shared=shared)
        assert third.search("鸡翅", 1)[0][0].text.startswith("鸡翅用烤箱")
        third.close()
    assert len(opens) == 1


def test_no_readable_document_is_a_usage_error_naming_the_paths(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "photo.jpg").write_bytes(b"\xff\xd8")
    log: list[str] = []
    with pytest.raises(DocsError) as raised:
        opened(settings(tmp_path, empty, tmp_path / "missing"), log)
    assert raised.value.exit_code == ExitCode.USAGE
    assert str(empty) in str(raised.value) and "missing" in str(raised.value)
    assert any("不存在" in line and "missing" in line for line in log)
    assert any("1 个文件不是认得的格式" in line for line in log)


def test_without_fts5_the_message_says_so_and_how_to_get_it(tmp_path, notes, monkeypatch):
    monkeypatch.setattr(docs_backend, "has_fts5", lambda: False)
    with pytest.raises(DocsError, match="没有 FTS5") as raised:
        opened(settings(tmp_path, notes))
    assert raised.value.exit_code == ExitCode.USAGE and "python.org" in str(raised.value)


def test_without_a_cache_the_index_is_in_memory_for_this_run(tmp_path, notes):
    log: list[str] = []
    backend = opened(settings(tmp_path, notes, no_cache=True), log)
    assert backend.search("快照", 1)[0] and any("在内存里建索引" in line for line in log)
    backend.close()
    assert not (tmp_path / "cache").exists()


def test_bad_files_are_noted_and_the_rest_is_indexed(tmp_path, notes):
    (notes / "binary.txt").write_bytes(b"\x00\x01\x02 not text")
    (notes / "utf16.txt").write_bytes("备忘：UTF-16 的笔记也能读".encode("utf-16"))
    (notes / "gbk.txt").write_bytes("热水器点不着火先看燃气表的电池".encode("gb18030"))
    with open(notes / "huge.md", "wb") as huge:  # 稀疏文件：100 MB，不占磁盘
        huge.truncate(100 * 1024 * 1024)
    os.mkfifo(notes / "pipe.md")
    (notes / "loop").symlink_to(notes, target_is_directory=True)
    (notes / "outside.md").symlink_to(tmp_path / "elsewhere.md")
    (tmp_path / "elsewhere.md").write_text("外面的文件", encoding="utf-8")
    for hidden in (".git", "node_modules"):
        (notes / hidden).mkdir()
        (notes / hidden / "inside.md").write_text("隐藏目录里的笔记", encoding="utf-8")
    log: list[str] = []
    backend = opened(settings(tmp_path, notes), log)
    said = "\n".join(log)
    assert "binary.txt：有 NUL 字节" in said
    assert "huge.md 有 100 MB，超过 20 MB 的上限" in said and MAX_FILE_BYTES == 20 * 1024 * 1024
    assert "pipe.md 不是普通文件" in said
    assert "loop 是指向已经读过的文件夹的符号链接（可能成环），跳过" in said
    assert "outside.md 是指向文件夹外面的符号链接" in said
    assert backend.search("燃气表", 1)[0][0].title == "gbk.txt:1"
    assert backend.search("UTF-16", 1)[0][0].title == "utf16.txt:1"
    assert backend.search("隐藏目录", 3)[0] == [] and backend.search("外面的文件", 3)[0] == []
    backend.close()


def test_the_big_file_and_the_pipe_are_never_opened(tmp_path, notes, monkeypatch):
    with open(notes / "huge.md", "wb") as huge:
        huge.truncate(MAX_FILE_BYTES + 1)
    os.mkfifo(notes / "pipe.md")
    reads = Reads(monkeypatch)
    opened(settings(tmp_path, notes)).close()
    assert sorted(reads.paths) == ["cooking.txt", "raid.md", "router.html"]


def test_a_file_that_cannot_be_read_is_noted_and_tried_again_next_time(tmp_path, notes, monkeypatch):
    secret = notes / "locked.md"
    secret.write_text("# 上锁\n\n不给看\n", encoding="utf-8")
    original = docs_folder.read_bytes

    def refuse(path, *rest):
        if path.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return original(path, *rest)
    monkeypatch.setattr(docs_folder, "read_bytes", refuse)
    log: list[str] = []
    opened(settings(tmp_path, notes), log).close()
    assert any("locked.md 读不了" in line for line in log)
    monkeypatch.setattr(docs_folder, "read_bytes", original)
    backend = opened(settings(tmp_path, notes))
    assert backend.search("不给看", 1)[0][0].title == "locked.md:3 · 上锁"
    backend.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root 读得了没有读权限的文件")
def test_a_file_without_read_permission_is_noted(tmp_path, notes):
    locked = notes / "locked.md"
    locked.write_text("不给看", encoding="utf-8")
    locked.chmod(0)
    log: list[str] = []
    opened(settings(tmp_path, notes), log).close()
    assert any("locked.md 读不了" in line for line in log)


def test_pdfs_are_read_by_page_and_without_pypdf_one_note_says_how_to_install_it(tmp_path, notes, monkeypatch):
    write_pdf(notes / "ups.pdf", [["UPS 使用笔记", "断电 5 分钟后 NAS 自动关机。"], ["电池更换", "铅酸电池三年一换。"]])
    write_pdf(notes / "second.pdf", [["Another manual"]])
    monkeypatch.setattr(docs_folder, "has_pypdf", lambda: False)
    log: list[str] = []
    opened(settings(tmp_path, notes), log).close()
    notes_about_pdf = [line for line in log if "PDF" in line]
    assert len(notes_about_pdf) == 1
    assert "2 个 PDF 没有读" in notes_about_pdf[0] and "-m pip install 'pypdf>=" in notes_about_pdf[0]
    monkeypatch.undo()
    backend = opened(settings(tmp_path, notes))  # 装上以后：下次就读
    hits, _ = backend.search("电池多久换", 1)
    assert hits[0].title == "ups.pdf:p2 · 第 2 页" and hits[0].link.endswith("ups.pdf#page=2")
    backend.close()


def test_other_folders_indexes_make_room_within_the_cache_limit(tmp_path, notes):
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("另一个文件夹" * 30000, encoding="utf-8")
    opened(settings(tmp_path, other)).close()
    [old_index] = (tmp_path / "cache" / "docs").iterdir()
    log: list[str] = []
    opened(settings(tmp_path, notes, cache_max_mb=1), log).close()
    assert not old_index.exists() and len(list((tmp_path / "cache" / "docs").iterdir())) == 1
    (notes / "big.md").write_text("\n\n".join(f"第 {n} 段笔记 {n * 7919}" for n in range(60000)), encoding="utf-8")
    opened(settings(tmp_path, notes, cache_max_mb=1), log).close()
    assert any("超过缓存上限 1 MB" in line for line in log)


def test_a_file_name_that_is_not_utf8_is_noted_and_the_rest_is_indexed(tmp_path, notes):
    """GB18030（GBK）编码的文件名（Windows 上打的 zip 解出来常这样）：Python 里是带代理码位的文字，存不进索引。
    扫一遍时看到的是程序内部出错（退出码 4）；现在说一句哪个文件、怎么改，其余的照常。"""
    gbk_name = os.fsdecode("备份.md".encode("gb18030"))
    (notes / gbk_name).write_text("三份备份放两个地方", encoding="utf-8")
    (notes / os.fsdecode("旧笔记".encode("gb18030"))).mkdir()
    (notes / os.fsdecode("旧笔记".encode("gb18030")) / "a.md").write_text("旧的笔记", encoding="utf-8")
    log: list[str] = []
    backend = opened(settings(tmp_path, notes), log)
    said = "\n".join(log)
    assert said.count("文件名不是 UTF-8 编码") == 2 and "convmv" in said
    assert backend.search("快照", 1)[0][0].title == "storage/raid.md:10 · 快照"
    assert backend.search("备份", 3)[0] == [] and backend.search("旧的笔记", 3)[0] == []
    backend.close()


def test_a_folder_or_a_single_file_named_in_gbk_is_no_internal_error(tmp_path):
    folder = tmp_path / os.fsdecode("旧".encode("gb18030"))
    folder.mkdir()
    (folder / "ok.md").write_text("RAID 重建花了十九个小时", encoding="utf-8")
    (folder / os.fsdecode("备份.md".encode("gb18030"))).write_text("RAID 重建", encoding="utf-8")
    backend = opened(settings(tmp_path, folder, docs_links="relative"))
    [hit] = backend.search("RAID 重建", 3)[0]
    assert hit.link == "\\xbe\\xc9/ok.md:1" and hit.link.encode("utf-8")
    assert backend.read(hit, 100)[0] == "RAID 重建花了十九个小时"
    backend.close()
    log: list[str] = []
    with pytest.raises(DocsError):
        opened(settings(tmp_path, folder / os.fsdecode("备份.md".encode("gb18030"))), log)
    assert any("文件名不是 UTF-8 编码" in line for line in log)


@pytest.mark.parametrize("where", ["cache", "link"])
def test_a_cache_directory_inside_the_notes_folder_gets_no_index(tmp_path, notes, where):
    """XDG_CACHE_HOME 在笔记文件夹里（或经过符号链接指到里面）：扫一遍时索引照样写进了文件夹。现在这次在内存里建，
    说一句，文件夹里什么都不多。"""
    (tmp_path / "link").symlink_to(notes, target_is_directory=True)
    cache = notes / "cache" if where == "cache" else tmp_path / "link" / "cache"
    before = snapshot(notes)
    log: list[str] = []
    backend = DocsBackend(SearchSettings(docs=(str(notes),), cache_dir=cache), log.append, Deadline(None))
    assert backend.search("快照", 1)[0]
    backend.close()
    assert snapshot(notes) == before and not (notes / "cache").exists()
    assert any("索引不写进你的文件夹" in line and "XDG_CACHE_HOME" in line for line in log)


def test_an_index_locked_by_another_process_is_not_taken_for_a_broken_one(tmp_path, notes, monkeypatch):
    """另一个进程正拿着索引（同时在建同一个文件夹的索引）：扫一遍时等满 busy_timeout 以后说“索引文件坏了”，把别人
    正在用的索引删了重建。现在说它被占用，这次在内存里建，那个索引原样留着。"""
    import sqlite3

    from sourced_answers.search import docs_index
    opened(settings(tmp_path, notes)).close()
    [index] = (tmp_path / "cache" / "docs").iterdir()
    monkeypatch.setattr(docs_index, "BUSY_TIMEOUT_MS", 50)
    other = sqlite3.connect(index, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        log: list[str] = []
        backend = opened(settings(tmp_path, notes), log)
        assert backend.search("快照", 1)[0]
        backend.close()
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert any("正被另一个进程占用" in line for line in log) and not any("坏了" in line for line in log)
    assert index.exists() and sqlite3.connect(index).execute("SELECT count(*) FROM files").fetchone()[0] == 3


def test_the_same_notes_given_twice_or_inside_another_given_folder_count_once(tmp_path, notes):
    """同一个文件夹给两次（一次经过符号链接）、再给它里面的一个文件：每一段只作为一条资料出现，并说一句。"""
    link = tmp_path / "link-to-notes"
    link.symlink_to(notes, target_is_directory=True)
    inner = next(path for path in sorted(notes.rglob("*")) if path.is_file() and path.suffix in (".md", ".txt"))
    log: list[str] = []
    backend = opened(settings(tmp_path, inner, notes, link), log)
    hits = backend.search("鸡翅", 10)[0]
    assert len({hit.text for hit in hits}) == len(hits), [hit.title for hit in hits]
    assert len(backend.folders) == 1
    assert sum("不再单独算一次" in line for line in log) == 2, log
    backend.close()


def test_an_index_another_process_keeps_writing_is_used_as_it_is_with_a_note(tmp_path, notes, monkeypatch):
    """索引打开了、要更新时另一个进程一直占着写锁（sqlite 等满 10 秒后说 database is locked）：不是程序内部错误，
    这次用索引里已有的内容，说一句，下次再看改过的文件。"""
    import sqlite3

    from sourced_answers.search import docs_index
    opened(settings(tmp_path, notes)).close()
    (notes / "cooking.txt").write_text("鸡翅用烤箱 200 度烤 20 分钟。\n", encoding="utf-8")

    def locked(self):
        raise sqlite3.OperationalError("database is locked")
    monkeypatch.setattr(docs_index.Index, "begin", locked)
    log: list[str] = []
    backend = opened(settings(tmp_path, notes), log)
    assert backend.search("鸡翅", 1)[0][0].text.startswith("可乐")  # 已有的内容
    assert any("索引这次没能更新（数据库被别的进程锁住了）" in line for line in log), log
    backend.close()
    monkeypatch.undo()
    again = opened(settings(tmp_path, notes))
    assert again.search("鸡翅", 1)[0][0].text.startswith("鸡翅用烤箱")  # 下次再看
    again.close()
