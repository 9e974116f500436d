#!/usr/bin/env bash
# 一条命令上手：建虚拟环境 .venv、装依赖，然后
#   bash quickstart.sh "家用 NAS 怎么选" --read 2   按这台机器的情况选好秘塔和模型服务来回答问题
#   bash quickstart.sh                              用默认问题
#   bash quickstart.sh --test                       装好测试需要的一切，运行 lint、类型检查和全部测试
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
pip_install() {
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "$@"
}
if [ "${1:-}" = "--test" ]; then
  shift
  # 本项目以可编辑方式装进 .venv（带 test、model、cluster、serve 和 docs 五组附加依赖），再装自带模型的模型文件
  pip_install -e '.[test,model,cluster,serve,docs]'
  .venv/bin/python -m sourced_answers.local_model --install
  # 审阅页（--html）的测试在真实的无头 Chromium 里打开页面：用 Debian 的 chromium 包，
  # 加上中文字体（没有它，截图里的中文全是方块，人看不出页面对不对）
  if ! command -v chromium >/dev/null 2>&1 || ! fc-list :lang=zh 2>/dev/null | grep -q .; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "安装 Chromium 和中文字体（审阅页的浏览器测试要它们）…" >&2
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk; } \
        >/dev/null 2>&1 || echo "⚠ Chromium 或中文字体没装上：审阅页的浏览器测试会跳过（CI 里会算失败）" >&2
    else
      echo "没有 Chromium 或中文字体：审阅页的浏览器测试会跳过（sudo apt-get install chromium fonts-noto-cjk 可以装上）" >&2
    fi
  fi
  echo "lint（ruff）…" >&2
  .venv/bin/ruff check .
  echo "类型检查（mypy）…" >&2
  .venv/bin/mypy
  # 慢的测试大多在等本地服务和子进程：-n auto 开核数两倍的进程（tests/conftest.py）
  exec .venv/bin/python -m pytest -q -n auto --dist loadgroup "$@"
fi
pip_install -r requirements.txt
exec .venv/bin/python -m sourced_answers.quickstart "$@"
