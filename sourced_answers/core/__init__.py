"""第 2 层：每一层都用的基础，只依赖 checker 和标准库——错误和退出码、设置、遮密钥、安全的输出、写文件、
重试和总时限、网络错误的中文原因。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
