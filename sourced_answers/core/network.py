"""网络出错时给人看的中文原因。

requests / urllib3 的异常说明是英文，还夹着内部细节（“Max retries exceeded with url …”）。这里顺着异常链
找到真正的原因（找不到主机、连接被拒绝、TLS 握手失败……），换成一句中文；认不出来的就说“网络出错”。
"""
import errno

# 常见的系统错误号 → 中文（文件和网络共用）
ERRNO_TEXT = {
    errno.ENOENT: "没有这个文件或目录",
    errno.EACCES: "没有权限",
    errno.EPERM: "不允许这样操作",
    errno.EISDIR: "这是一个目录",
    errno.ENOTDIR: "路径里有一段不是目录",
    errno.ENOSPC: "磁盘已满",
    errno.EROFS: "文件系统是只读的",
    errno.ENAMETOOLONG: "文件名太长",
    errno.ELOOP: "符号链接绕成了圈",
    errno.EEXIST: "已经存在",
    errno.EPIPE: "管道已经关闭",
    errno.EDQUOT: "超出了磁盘配额",
    errno.EIO: "读写设备出错",
    errno.ECONNREFUSED: "连接被拒绝，那个端口上没有服务",
    errno.ECONNRESET: "连接被对方断开",
    errno.ENETUNREACH: "网络不可达",
    errno.EHOSTUNREACH: "主机不可达",
    errno.ETIMEDOUT: "连接超时",
    errno.EADDRNOTAVAIL: "这个地址在本机上不能用",
    errno.EADDRINUSE: "地址已经被别的程序占用",
}


def os_error_text(error: OSError) -> str:
    """一个 OSError 的中文说明（认不出的错误号写成“系统错误 N”）。"""
    if error.errno in ERRNO_TEXT:
        return ERRNO_TEXT[error.errno]
    return f"系统错误 {error.errno}" if error.errno else "系统错误"


def causes(error: BaseException, limit: int = 12) -> list[BaseException]:
    """顺着 __cause__、__context__、args 和 urllib3 的 reason 找到的所有异常（包括它自己），先近后远。"""
    found: list[BaseException] = []
    queue = [error]
    while queue and len(found) < limit:
        current = queue.pop(0)
        if any(current is seen for seen in found):
            continue
        found.append(current)
        linked = [current.__cause__, current.__context__, getattr(current, "reason", None), *current.args]
        queue += [item for item in linked if isinstance(item, BaseException)]
    return found


def network_reason(error: BaseException) -> str:
    """连不上、读不完时的中文原因。"""
    import socket  # 只在真的连过网络、出了错时才要：核对一条保存的记录不必导入 ssl
    import ssl
    chain = causes(error)
    names = {type(item).__name__ for item in chain}
    for item in chain:
        if isinstance(item, socket.gaierror) or "NameResolutionError" in names:
            return "找不到这个主机名，域名解析失败"
        if isinstance(item, ssl.SSLError) or "SSLError" in names:
            return "TLS/SSL 握手失败，证书或协议不对"
        if "ProxyError" in names:
            return "代理服务器出错"
        if "ConnectTimeoutError" in names or "ConnectTimeout" in names:
            return "连接超时"
        if isinstance(item, OSError) and item.errno in ERRNO_TEXT:
            return ERRNO_TEXT[item.errno]
    if "ProtocolError" in names or "ChunkedEncodingError" in names or "IncompleteRead" in names:
        return "回答中途断开"
    return "网络出错"
