"""第 3 层：资料从哪里来——搜索后端的接口和登记（backend），秘塔这个后端（metaso_backend、metaso_client），
后端结果的本地缓存（source_cache），所有后端共用的搜索加读取（gather）、挑段落（passages），以及 --demo 的演示服务。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
