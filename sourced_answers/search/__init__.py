"""第 3 层：资料从哪里来——秘塔客户端（metaso_search）、本地缓存（metaso_cache）、
搜索加读取（gather）、挑段落（passages），
以及 --demo 的演示服务（demo_service、demo_pages）。"""
