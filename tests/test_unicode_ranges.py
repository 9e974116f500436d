"""checker/unicode_ranges.py 是由 unicodedata 生成的数据（说明里的引用、一行里引用一句话、遮密钥都用它）：
和这个 Python 的 Unicode 数据库现算的结果一致，像锁文件一样。"""
import unicodedata

import pytest

from sourced_answers.checker import unicode_ranges


@pytest.mark.skipif(unicodedata.unidata_version != unicode_ranges.UNICODE_VERSION,
                    reason="这个 Python 的 Unicode 版本和生成数据时的不同")
def test_the_stored_ranges_are_what_unicodedata_says():
    source = unicode_ranges.__file__
    with open(source, encoding="utf-8") as handle:
        text = handle.read()
    assert unicode_ranges.generated_source(text) == text, \
        "请运行 python -m sourced_answers.checker.unicode_ranges 重新生成"


def test_every_stored_character_has_the_named_categories():
    """换了 Unicode 版本也该成立：存下的每个码位都属于它那一类（新版本多出字符，极少改动已有字符的类别）。"""
    for name, belongs in unicode_ranges.PREDICATES.items():
        for start, end in unicode_ranges.parsed(getattr(unicode_ranges, name)):
            for code in (start, end, (start + end) // 2):
                assert belongs(chr(code)), (name, hex(code))


def test_numeric_and_compatible_characters_are_the_ones_a_reader_reads_as_numbers_and_plain_forms():
    for char in "❺Ⅳⅻ〥㈤㊄":
        assert unicode_ranges.numeric(char), char
    for char in "①⑸⒌⼀⼗ﬁ㎏\uf9b2":
        assert unicode_ranges.compatible(char) and not unicode_ranges.numeric(char), char
    for char in "²₃〇…　Ａ5五":
        assert not unicode_ranges.numeric(char) and not unicode_ranges.compatible(char), char
