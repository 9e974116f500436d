"""秘塔客户端：每一种已知的错误形态都变成带中文说明的 MetasoError，且不含密钥。"""
import pytest

import metaso_search
from fake_metaso import FakeMetaso
from sourced_answers.core.errors import MetasoError, MissingKeyError
from tests.support import CANARY_KEY


def call_search(fake, key=None):
    return metaso_search.search("家用 NAS 怎么选", size=3, key=key or fake.key, base=fake.base_url)


def failure(fake, endpoint="search", key=None):
    with pytest.raises(MetasoError) as caught:
        if endpoint == "search":
            call_search(fake, key)
        else:
            metaso_search.read_page(fake.link(0), key=key or fake.key, base=fake.base_url)
    text = str(caught.value)
    assert CANARY_KEY not in text
    return caught.value, text


def test_search_returns_documented_fields(fake_metaso):
    response = call_search(fake_metaso)
    assert response["credits"] == 3 and response["total"] == 5
    first = response["webpages"][0]
    assert first["position"] == 1 and first["score"] in ("high", "medium", "low")
    assert first["link"] == fake_metaso.link(0) and first["date"] == "2026年09月12日"
    assert len(response["webpages"]) == 3


def test_size_is_accepted_as_string_or_number(fake_metaso):
    assert len(fake_metaso.search({"q": "NAS", "size": "2"})["webpages"]) == 2
    assert len(fake_metaso.search({"q": "NAS", "size": 4})["webpages"]) == 4


def test_bad_key_on_search_is_2005(fake_metaso):
    error, text = failure(fake_metaso, key="mk-wrong")
    assert error.code == 2005 and error.status == 200
    assert "API密钥无效" in text and "METASO_API_KEY" in text


def test_bad_key_on_reader_is_500_even_for_text(fake_metaso):
    error, text = failure(fake_metaso, "reader", key="mk-wrong")
    assert error.code == 500 and "服务器错误" in text


@pytest.mark.parametrize("body, code, next_step", [
    ('{"code": 3003, "message": "今日调用次数已达上限"}', 3003, "明天再试"),
    ('{"errCode": 3000, "errMsg": "余额不足"}', 3000, "充值"),
    ('{"code": 5000, "message": "系统内部错误"}', 5000, "稍后重试"),
    ('{"errCode": "2005", "errMsg": "API密钥无效"}', 2005, "METASO_API_KEY"),
])
def test_error_bodies_in_both_shapes(fake_metaso, body, code, next_step):
    fake_metaso.fail("search", body)
    error, text = failure(fake_metaso)
    assert error.code == code
    assert f"秘塔返回错误 {code}" in text and next_step in text


@pytest.mark.parametrize("status, expected", [
    (401, "METASO_API_KEY"), (403, "权限"), (429, "请求太频繁"), (502, "稍后重试"), (503, "稍后重试")])
def test_http_errors_with_unknown_bodies(fake_metaso, status, expected):
    fake_metaso.fail("search", "<html><body><h1>Bad Gateway</h1></body></html>", status=status,
                     content_type="text/html")
    error, text = failure(fake_metaso)
    assert error.status == status and f"HTTP {status}" in text and expected in text
    assert "<h1>" not in text


@pytest.mark.parametrize("body", ['{"errCode": Infinity, "errMsg": "x"}', '{"code": 1e400}', '{"data": NaN}',
                                  '{"errCode": -Infinity}'])
def test_nan_and_infinity_in_a_reply_are_not_json_and_crash_nothing(fake_metaso, body):
    """NaN、Infinity 不是 JSON，1e400 在程序里是无穷大：以前 json.loads 收下它们，int(Infinity) 抛 OverflowError。"""
    fake_metaso.fail("search", body)
    _, text = failure(fake_metaso)
    assert "无法解析" in text


@pytest.mark.parametrize("code, shown", [('"' + "9" * 5000 + '"', "9" * 19 + "…" + "9" * 19),
                                         ('{"a": 1}', '{"a": 1}'), ("true", "true"), ('"E01"', "E01")])
def test_an_odd_error_code_is_shown_short_and_as_json(fake_metaso, code, shown):
    """错误码是对方的数据：5000 位的数字以前原样写进说明，对象写成 Python 的 repr（{'a': 1}）。"""
    fake_metaso.fail("search", f'{{"errCode": {code}, "errMsg": "出错了"}}')
    _, text = failure(fake_metaso)
    assert f"秘塔返回错误 {shown}：出错了" in text and len(text) < 500, text


def test_html_page_with_status_200_is_not_json(fake_metaso):
    fake_metaso.fail("search", "<html>维护中</html>", content_type="text/html; charset=utf-8")
    _, text = failure(fake_metaso)
    assert "无法解析" in text and "维护中" in text


def test_reader_error_body_in_text_answer(fake_metaso):
    fake_metaso.fail("reader", '{"errCode":500,"errMsg":"服务器错误"}', content_type="text/plain")
    error, _ = failure(fake_metaso, "reader")
    assert error.code == 500


def test_reader_text_without_charset_is_decoded_as_utf8(fake_metaso):
    fake_metaso.fail("reader", "正文：中文内容", content_type="text/plain")
    assert metaso_search.read_page(fake_metaso.link(0), key=fake_metaso.key, base=fake_metaso.base_url) == "正文：中文内容"


def test_reader_caps_text(fake_metaso):
    text = metaso_search.read_page(fake_metaso.link(0), max_chars=30, key=fake_metaso.key, base=fake_metaso.base_url)
    assert text == fake_metaso.pages[0]["text"][:30]


def test_empty_page_text_is_a_failed_read(fake_metaso):
    fake_metaso.fail("reader", "   ", content_type="text/plain")
    _, text = failure(fake_metaso, "reader")
    assert "空的" in text


def test_echoed_authorization_is_redacted(fake_metaso):
    fake_metaso.fail("search", "<pre>echo: {authorization}</pre>", status=500, content_type="text/html")
    _, text = failure(fake_metaso)
    assert "mk-***" in text


def test_connection_refused_names_the_service():
    with FakeMetaso() as fake:
        base = fake.base_url
    with pytest.raises(MetasoError) as caught:
        metaso_search.search("NAS", key=CANARY_KEY, base=base)
    assert "连不上秘塔服务" in str(caught.value) and CANARY_KEY not in str(caught.value)


def test_missing_key_is_its_own_error(monkeypatch):
    monkeypatch.delenv("METASO_API_KEY", raising=False)
    with pytest.raises(MissingKeyError):
        metaso_search.api_key({})


def test_an_empty_result_is_no_results():
    # 接口文档里的两种“没有搜到”：空列表，或者干脆没有这个字段
    assert metaso_search.search_results({}) == []
    assert metaso_search.search_results({"webpages": []}) == []


GOOD_ITEM = {"title": "家用 NAS 选购要点", "link": "https://example.com/nas", "snippet": "硬盘位至少两盘位"}


@pytest.mark.parametrize("response, field", [
    ({"webpages": None}, "webpages 应是列表，收到的是null"),
    ({"webpages": {"title": "家用 NAS"}}, "webpages 应是列表，收到的是对象"),
    ({"webpages": "家用 NAS"}, "webpages 应是列表，收到的是文字"),
    ({"webpages": [GOOD_ITEM, "junk"]}, "webpages[1] 应是对象，收到的是文字"),
    ({"webpages": [{"title": "家用 NAS", "snippet": "两盘位"}]}, "webpages[0] 缺少 link"),
    ({"webpages": [dict(GOOD_ITEM, link=None)]}, "webpages[0] 缺少 link"),
    ({"webpages": [GOOD_ITEM, dict(GOOD_ITEM, link="   ")]}, "webpages[1].link 是空的"),
    ({"webpages": [dict(GOOD_ITEM, title=3)]}, "webpages[0].title 应是文字，收到的是数字"),
    ({"webpages": [dict(GOOD_ITEM, snippet=["两盘位"])]}, "webpages[0].snippet 应是文字，收到的是列表"),
    ({"webpages": [dict(GOOD_ITEM, date=20250809)]}, "webpages[0].date 应是文字，收到的是数字"),
])
def test_a_malformed_result_list_names_the_field(response, field):
    with pytest.raises(MetasoError) as caught:
        metaso_search.search_results(response)
    assert f"秘塔的搜索响应格式不对：{field}" in str(caught.value)
    assert "这不是没有搜到结果" in str(caught.value)


def test_optional_fields_may_be_missing_or_null():
    assert metaso_search.search_results({"webpages": [GOOD_ITEM, dict(GOOD_ITEM, date=None, authors=None)]})
