"""--docs 的索引：汉字两个一组、英文去掉常见词尾；问法的词和太常见的词不拿去搜。"""
from sourced_answers.search.docs_formats import Passage
from sourced_answers.search.docs_index import Index, terms


def test_han_text_becomes_overlapping_bigrams_and_other_text_lowercase_words():
    assert terms("RAID重建 Backups of 2024") == ["raid", "重建", "backup", "of", "2024"]
    assert terms("缓存目录") == ["缓存", "存目", "目录"] and terms("锁") == ["锁"]


def test_question_words_and_common_terms_are_not_searched():
    index = Index(None)
    index.begin()
    for number in range(8):
        index.put(f"n{number}.md", 1, 1, number, [Passage(1, 1, "", f"设置 第{number}篇 路由器" if number else "设置 快照")])
    index.commit()
    assert index.query_terms("怎么设置快照") == ["快照"]  # “设置”在每一段里都有，“怎么”是问法
    assert index.query_terms("怎么设置") == ["设置"]  # 只剩常见的词时照样搜它
    assert [match.relative for match in index.search("如何设置快照", 3)] == ["n0.md"]
    index.close()
