"""第 4 层：模型——OpenAI 兼容服务的客户端、提示词、付费之前的检查、自带的本机模型。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
