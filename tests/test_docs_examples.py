"""文档里的 Python 例子照着抄就能跑：README 和 docs/ 里每一段 ```python 代码都在这里执行一遍（模块搬了家、
函数改了名，例子就会失败，而不是悄悄过时）。要真实的秘塔密钥和模型服务才能跑的例子标成 ```py，只给人看。"""
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
