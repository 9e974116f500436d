"""意思相反的词：一句话照抄了资料、只把一个词换成了它的反义词（“扩大”换成“缩小”、“左”换成“右”）时，
两边在同一个槽里的就是这样一对（slots.py）。只在槽里比：整句里出现一个“小”什么也说明不了。

一对写一行，两个词用空格隔开；顺序无所谓（两个方向都算）。中文的一个字的对（大 小）只在槽里正好是这一个字时算。
英文的词按对齐时的写法比：小写、去掉复数的 s（alignment.unit_code）。
"""

CHINESE = """
扩大 缩小|提高 降低|提升 降低|增加 减少|增多 减少|上升 下降|增长 下降|增长 减少|增强 减弱|加强 削弱|加强 减弱|
加快 放缓|加快 减慢|加速 减速|升高 降低|上涨 下跌|上涨 下降|上调 下调|涨价 降价|增产 减产|增收 减收|盈利 亏损|
盈余 亏损|顺差 逆差|扩张 收缩|膨胀 紧缩|放宽 收紧|放松 收紧|放开 限制|宽松 严格|加大 减小|加大 减弱|加大 缩小|
支持 反对|支持 抵制|赞成 反对|同意 反对|拥护 反对|允许 禁止|准许 禁止|鼓励 禁止|鼓励 限制|接受 拒绝|承认 否认|
肯定 否定|喜欢 讨厌|喜爱 厌恶|信任 怀疑|相信 怀疑|促进 阻碍|促进 抑制|推动 阻碍|有利 不利|有益 有害|有效 无效|
合法 非法|正确 错误|真实 虚假|成功 失败|胜利 失败|获胜 失败|胜 负|赢 输|获胜 落败|领先 落后|先进 落后|
开放 关闭|打开 关闭|开启 关闭|开通 关闭|启用 停用|启动 停止|开始 结束|开始 停止|开业 倒闭|开幕 闭幕|
出现 消失|存在 消失|保留 取消|保留 删除|增设 取消|设立 撤销|建立 撤销|成立 解散|加入 退出|进入 退出|
上台 下台|升级 降级|升职 降职|提前 推迟|提早 推迟|延长 缩短|延期 提前|出生 死亡|生 死|活 死|存活 死亡|
买 卖|买入 卖出|购买 出售|进口 出口|输入 输出|收入 支出|借入 借出|上传 下载|
大 小|多 少|高 低|长 短|早 晚|前 后|左 右|上 下|内 外|南 北|东 西|快 慢|新 旧|冷 热|轻 重|强 弱|
真 假|男 女|老 少|贵 贱|贫 富|深 浅|厚 薄|宽 窄|远 近|粗 细|明 暗|干 湿|软 硬|松 紧|正 负|正 反|
胖 瘦|美 丑|好 坏|优 劣|善 恶|难 易|首 末|始 终|进 出|收 支|得 失|存 亡|增 减|升 降|涨 跌|开 关|
较大 较小|更大 更小|最大 最小|最多 最少|最高 最低|最早 最晚|最新 最旧|最强 最弱|最快 最慢|最长 最短|
大型 小型|大量 少量|多数 少数|大多数 少数|多 少数|全部 部分|所有 部分|整体 局部|全面 片面|完全 部分|
第一 最后|首次 最后|首先 最后|开头 结尾|年初 年底|年初 年末|月初 月底|上旬 下旬|上半年 下半年|
上午 下午|白天 夜晚|白天 晚上|早上 晚上|今年 去年|今年 明年|去年 明年|昨天 明天|今天 明天|今天 昨天|
过去 未来|以前 以后|之前 之后|以上 以下|以内 以外|以上 以内|以前 现在|战前 战后|饭前 饭后|
国内 国外|国内 海外|境内 境外|城市 农村|城镇 农村|城里 乡下|公有 私有|国有 私营|国营 私营|公立 私立|
公开 秘密|公开 私下|公共 私人|集体 个人|共同 单独|合居 独居|主动 被动|积极 消极|乐观 悲观|主观 客观|
感性 理性|具体 抽象|直接 间接|正面 负面|正式 非正式|官方 民间|简单 复杂|容易 困难|容易 艰难|顺利 困难|
安全 危险|稳定 动荡|和平 战争|团结 分裂|统一 分裂|集中 分散|聚集 分散|充足 不足|充足 短缺|充分 不足|
足够 不够|过剩 短缺|富裕 贫穷|富有 贫穷|富 穷|便宜 昂贵|便宜 贵|廉价 昂贵|年长 年轻|年老 年轻|老年 青年|
男性 女性|男子 女子|男人 女人|男孩 女孩|男生 女生|先生 女士|丈夫 妻子|父亲 母亲|爸爸 妈妈|儿子 女儿|
哥哥 姐姐|弟弟 妹妹|哥哥 弟弟|姐姐 妹妹|祖父 祖母|爷爷 奶奶|叔叔 阿姨|国王 王后|王子 公主|雄性 雌性|
沉重 轻松|严肃 轻松|紧张 放松|忙碌 空闲|忙 闲|勤奋 懒惰|聪明 愚蠢|诚实 虚伪|谦虚 骄傲|善良 邪恶|
高兴 难过|快乐 悲伤|开心 难过|兴奋 沮丧|喜 悲|笑 哭|温顺 凶悍|安静 吵闹|干净 肮脏|清楚 模糊|清晰 模糊|
明确 模糊|光明 黑暗|明亮 黑暗|通明 漆黑|热闹 冷清|繁华 冷清|繁荣 萧条|兴盛 衰落|兴起 衰落|上升期 衰退期|
必须 不必|必要 不必|必需 不必|需要 不需要|应该 不应该|能够 不能|可以 不可以|会 不会|是 不是|有 没有|有 无|
有关 无关|相关 无关|有限 无限|有形 无形|有线 无线|有偿 无偿|有罪 无罪|有毒 无毒|有害 无害|
相同 不同|一样 不同|一致 不一致|相似 不同|同意 不同意|满意 不满|合格 不合格|健康 不健康|
已经 尚未|已经 还没|已 未|曾经 从未|总是 从不|经常 很少|常常 很少|始终 从未|永远 暂时|永久 暂时|长期 短期|
长期 临时|固定 临时|正式 临时|持续 中断|连续 间断|静态 动态|静止 运动|单向 双向|单 双|单层次 多层次|
单一 多样|唯一 多个|独家 多家|垄断 竞争|输 赢|攻 守|进攻 防守|攻击 防御|胜诉 败诉|原告 被告|
买方 卖方|甲方 乙方|主队 客队|主场 客场|本地 外地|本国 外国|国产 进口|东部 西部|南部 北部|东方 西方|
北方 南方|上游 下游|上层 下层|上级 下级|上面 下面|上方 下方|前面 后面|前方 后方|左边 右边|左侧 右侧|
左手 右手|左转 右转|顺时针 逆时针|正数 负数|奇数 偶数|正极 负极|阳性 阴性|合法化 非法化|
加 减|乘 除|增值 贬值|升值 贬值|牛市 熊市|看涨 看跌|利好 利空|涨停 跌停|
都 大部分|全部 大部分|所有 大部分|
"""

ENGLISH = """
increase decrease|increase reduce|increase drop|rise fall|rose fell|risen fallen|raise lower|grow shrink|grew shrank|
expand shrink|expand contract|expanded contracted|gain loss|gain lose|profit loss|surplus deficit|up down|higher lower|
more less|more fewer|most least|most fewest|larger smaller|bigger smaller|greater smaller|greater less|largest smallest|
biggest smallest|highest lowest|maximum minimum|max min|above below|over under|before after|earlier later|early late|
earliest latest|first last|begin end|start end|start stop|started ended|started stopped|open close|open closed|
opened closed|enable disable|enabled disabled|on off|include exclude|included excluded|allow forbid|allow prohibit|
allowed forbidden|allowed prohibited|permit forbid|permitted forbidden|support oppose|supported opposed|accept reject|
accepted rejected|approve reject|approved rejected|agree disagree|like dislike|love hate|win lose|won lost|winner loser|
victory defeat|success failure|succeed fail|succeeded failed|pass fail|passed failed|true false|right wrong|
correct incorrect|
always never|all none|everyone nobody|everything nothing|possible impossible|likely unlikely|legal illegal|safe unsafe|
safe dangerous|secure insecure|valid invalid|visible invisible|present absent|alive dead|born died|birth death|live die|
import export|imported exported|buy sell|bought sold|buyer seller|input output|upload download|inbound outbound|
internal external|inside outside|interior exterior|domestic foreign|public private|male female|men women|man woman|
boy girl|husband wife|father mother|son daughter|brother sister|king queen|north south|east west|northern southern|
eastern western|left right|top bottom|upper lower|front back|forward backward|old new|older newer|oldest newest|
young old|younger older|youngest oldest|hot cold|warm cool|wet dry|full empty|heavy light|long short|longer shorter|
wide narrow|wider narrower|high low|deep shallow|thick thin|strong weak|stronger weaker|fast slow|faster slower|
fastest slowest|quick slow|cheap expensive|cheaper pricier|easy hard|easy difficult|easier harder|simple complex|
rich poor|happy sad|friend enemy|majority minority|mandatory optional|required optional|permanent temporary|
positive negative|same different|similar different|add remove|added removed|encrypt decrypt|encrypted unencrypted|
online offline|wireless wired|analog digital|manual automatic|active passive|increase cut|raised lowered|
accelerate decelerate|
"""

Pair = tuple[str, str]


def parsed(table: str) -> frozenset[Pair]:
    """“甲 乙|丙 丁|…” → 两个方向的全部对。"""
    pairs: set[Pair] = set()
    for entry in table.replace("\n", "").split("|"):
        words = entry.split()
        if len(words) == 2:
            pairs.add((words[0], words[1]))
            pairs.add((words[1], words[0]))
    return frozenset(pairs)


OPPOSITES = parsed(CHINESE) | parsed(ENGLISH)
