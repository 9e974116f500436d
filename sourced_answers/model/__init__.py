"""第 4 层：模型——OpenAI 兼容服务的客户端（model_client）、提示词（prompts）、付费之前的检查（preflight）、
自带的本机模型（llama_server、local_serving）。"""
