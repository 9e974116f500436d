#!/usr/bin/env bash
# 一条命令上手：建虚拟环境、装依赖，再按这台机器的情况选好秘塔和模型服务来回答问题。
#   bash quickstart.sh                      # 默认问题
#   bash quickstart.sh "家用 NAS 怎么选" --read 2
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
exec .venv/bin/python quickstart.py "$@"
