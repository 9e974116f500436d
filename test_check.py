"""引用核对的测试。前五个来自原教程，断言原样保留。"""
from answer_with_sources import check


def test_good():
    assert check("A 很好 [1]。\n\nB 也行 [2][3]。", 3) == ([], [])


def test_bad_citation_and_uncited_paragraph():
    problems, unused = check("A [5]。\n\n没有引用的段落。", 3)
    assert any("[5]" in p for p in problems) and any("第 2 段" in p for p in problems) and unused == [1, 2, 3]


def test_support_flags_wrong_source():
    from answer_with_sources import support
    srcs = [{"title": "选购", "text": "CPU：需要转码 4K 视频时选带核显的 Intel 型号。"},
            {"title": "RAID", "text": "RAID1 是镜像，两块盘存同样数据。"}]
    assert support("转码 4K 视频要选带核显的 Intel 型号 [1]。", srcs) == []
    assert len(support("转码 4K 视频要选带核显的 Intel 型号 [2]。", srcs)) == 1


def test_support_checks_citation_after_period():
    from answer_with_sources import support
    srcs = [{"title": "选购", "text": "CPU：需要转码 4K 视频时选带核显的 Intel 型号。"}, {"title": "RAID", "text": "RAID1 是镜像。"}]
    assert len(support("转码 4K 视频要选带核显的 Intel 型号。[2]", srcs)) == 1


def test_leading_citation_not_moved_to_previous_sentence():
    from answer_with_sources import support
    srcs = [{"title": "a", "text": "硬盘位至少两盘位，方便做 RAID1。"}, {"title": "b", "text": "RAID5 至少三块盘，可以容忍一块盘损坏。"}]
    assert support("硬盘位至少两盘位，方便做 RAID1。 [2] 中提到 RAID5 至少三块盘，可以容忍一块盘损坏[2]。", srcs) == []


