"""第 9 层：把核对过的回答送到人们聊天的地方——OpenAI 兼容的 HTTP 服务（--serve）和 MCP 服务（--mcp）。
两个都是 api 层上面薄薄的一层：每个请求走的是和命令行同一段代码。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
