"""文档里的 Python 例子照着抄就能跑（README 和 docs/ 里每一段 ```python 代码都在这里执行一遍：模块搬了家、
函数改了名，例子就会失败，而不是悄悄过时）。要真实的秘塔密钥和模型服务才能跑的例子标成 ```py，只给人看。
文档里说别的脚本、命令怎样做的几处，也和它们真的做法对一遍。"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def examples():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, code in enumerate(BLOCK.findall(path.read_text(encoding="utf-8")), 1):
            yield pytest.param(code, id=f"{path.name}-{number}")


@pytest.mark.parametrize("code", list(examples()))
def test_a_python_example_in_the_docs_runs(code):
    namespace: dict[str, object] = {}
    exec(compile(code, "<文档里的例子>", "exec"), namespace)  # noqa: S102  文档里的例子就是要原样跑


def test_the_verify_record_example_gives_the_documented_fields():
    code = next(param.values[0] for param in examples() if "verify_record(" in param.values[0])
    namespace: dict[str, object] = {}
    exec(compile(code, "<文档里的例子>", "exec"), namespace)  # noqa: S102
    result = namespace["result"]
    assert isinstance(result, dict) and isinstance(result["passed"], bool) and isinstance(result["problems"], list)


# ---------- 文档说的和脚本做的一样 ----------

def section(path, title):
    """一篇文档里标题是 title 的那一节（到下一个同级或更高的标题为止）。"""
    text = (ROOT / path).read_text(encoding="utf-8")
    start = text.index(title)
    level = len(title) - len(title.lstrip("#"))
    following = re.search(rf"\n#{{1,{level}}} ", text[start:])
    return text[start:start + following.start()] if following else text[start:]


def test_the_serving_doc_says_the_openwebui_check_leaves_the_background_tasks_on():
    """bench/openwebui_check.py 让 Open WebUI 的起标题、打标签、猜后续问题照默认开着（看服务是不是只问模型），
    docs/serving.md 以前说它把这些都关掉了。"""
    script = (ROOT / "bench" / "openwebui_check.py").read_text(encoding="utf-8")
    for task in ("TITLE", "TAGS", "FOLLOW_UP"):
        assert f'"ENABLE_{task}_GENERATION": "True"' in script
    described = section("docs/serving.md", "### 在真的 Open WebUI 里看一眼")
    assert "照默认开着" in described and "都关掉" not in described
