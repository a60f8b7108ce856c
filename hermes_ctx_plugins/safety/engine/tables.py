"""The character tables the views are built with (:mod:`.views`): look-alikes, Traditional Chinese, leetspeak."""

from __future__ import annotations

#: Cyrillic, Greek and small-capital letters read as the Latin ones they look like; CJK punctuation as ASCII
LOOKALIKES = {pair[0]: pair[1] for pair in (  # look-alikes are the point, hence the noqa
    "Аa Вb Еe Кk Мm Нh Оo Рp Сc Тt Уy Хx Ѕs Іi Јj аa вb еe кk мm нh оo рp сc тt уy хx ѕs іi јj ԁd һh ӏl ԛq ԝw Αa Βb "  # noqa: RUF001
    "Εe Ζz Ηh Ιi Κk Μm Νn Οo Ρp Τt Υy Χx αa βb γy εe ηn ιi κk νv οo ρp τt υu χx ωw ıi ȷj ɑa ɡg ɩi ᴀa ʙb ᴄc ᴅd ᴇe ɢg ʜh "  # noqa: RUF001
    "ɪi ᴊj ᴋk ʟl ᴍm ɴn ᴏo ᴘp ʀr ꜱs ᴛt ᴜu ᴠv ᴡw ʏy ᴢz").split()}  # noqa: RUF001
LOOKALIKES.update(zip("。、【】〔〕‘’“”「」『』《》", (". ", ",", *"[][]''", *'""""""""'), strict=True))  # noqa: RUF001
#: what the normalised view (token formats, case kept) reads a look-alike as: a letter as the Latin one in its case
#: (Cyrillic dze as S or s, a small capital G as g), a dash or a hyphen as "-", a low macron as "_": what spells a
#: token's prefix with look-alikes (a Cyrillic "s" and U+2010 in "sk-proj-", U+02CD in "ghp_")
LETTER_LOOKALIKES = {ch: latin.upper() if ch.isupper() else latin for ch, latin in LOOKALIKES.items()
                     if ch.isalpha() and latin.isascii() and latin.isalpha()}
LETTER_LOOKALIKES.update(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\ufe58\u02d7\u058a\u05be", "-"),
                         **dict.fromkeys("\u02cd\u2017", "_"))
#: Hangul fillers, letters that render as nothing, and the blank braille pattern, a symbol that renders as a space
#: but is no white space (it split a token out of the rules' sight)
FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
#: symbols that render as nothing though no category says so: the fillers and the musical null notehead
_BLANK_SYMBOLS = FILLERS | {"\U0001d159"}


def renders_blank(text: str) -> bool:
    """Whether ``text`` shows nothing at all: only white space, non-spacing and enclosing marks (a combining grapheme
    joiner, variation selectors), format and control characters, the default-ignorable code points this Python
    leaves unassigned (:data:`IGNORABLE_RANGES`), and :data:`_BLANK_SYMBOLS` -- what a
    memory entry of its own would be an empty line in the prompt of (a hostile-values pass stored U+2800, U+034F,
    U+FE0F, U+E0100, U+1D159 and U+17B4 alone as entries). Private-use characters (an icon font's) show."""
    import unicodedata

    return all(c.isspace() or c in _BLANK_SYMBOLS or unicodedata.category(c) in _BLANK_CATEGORIES
               or any(low <= ord(c) <= high for low, high in IGNORABLE_RANGES) for c in text)


def blank_code_points(text: str) -> str:
    """What a refusal of a :func:`renders_blank` text adds to "the text is empty": the characters that are not white
    space, named (at most eight), or nothing when there are none."""
    named = [f"U+{ord(c):04X}" for c in dict.fromkeys(text) if not c.isspace()]
    if not named:
        return ""
    more = f" and {len(named) - 8} more" if len(named) > 8 else ""
    return f" (it holds only characters that render as nothing: {', '.join(named[:8])}{more})"


#: not "Cn": what this Python's Unicode tables leave unassigned may be a newer emoji or script (a review: U+1FA77 alone,
#: and Unicode 15-16 text, were refused as empty on Python 3.11); the unassigned ones that render as nothing are
#: :data:`IGNORABLE_RANGES`
_BLANK_CATEGORIES = frozenset({"Mn", "Me", "Cf", "Cc", "Cs", "Zs", "Zl", "Zp"})
#: code points that render as nothing (Unicode's default-ignorable ones) which this Python's Unicode tables leave
#: unassigned, so no category says so: U+2065, U+FFF0-U+FFF8, U+13430-U+1343F (format characters since Unicode 15),
#: U+E0000-U+E0FFF
IGNORABLE_RANGES = ((0x2065, 0x2065), (0xFFF0, 0xFFF8), (0x13430, 0x1343F), (0xE0000, 0xE0FFF))
# Traditional characters read as Simplified, so that one vocabulary serves both scripts ("請無視先前的系統提示" is
# "请无视先前的系统提示"): the characters of the rules' Chinese words and of the notes around them, one to one.
TRADITIONAL = dict(zip(
    "無視係統規則請從現後須將們個這條範問題給於與為應該獲郵網鏈圖試讀寫檔詢錢號驗證碼務實際隱洩蓋優級舊廢預設審過濾"
    "裝論嗎麼時間內經聽執刪腳機盤檢測資鑰權絕註釋詞風險戶帳賬轉傳發開關閉運單據憑環變數錄對會歷訊複製誤錯識別說話語"
    "讓記憶遺棄擬約準護線連結頁點擊載壓縮備鍵匯額銀貨幣買賣價費訂購稱員專業層導屬產車門長見親頭書學習畫聲氣電腦術師"
    "軟體庫雲維團隊簽處總輸邊達鐘週報閱覽歡樂愛種樣還沒並兩來動態認確萬億齊辦幫願盡斷絡節殺毀壞滅竊盜騙詐釣駭範圍祕"
    "穩寶貝僅覺選擇項鬆緊啟廣隨禮讚鐵儲勢歸醫藥療飛場廳歲劃藝戲當衛衝擁擴藍綠鬥眾創樹積極標顯邏輯頻寬濫濟漢燈爭獨獻"
    "監筆築篩紀紙細終組絲綁綜緒編緩練縣織繞繫續罰羅義聖聞聯職脅臉臨舉華葉蘇蟲補觀觸計討訓託訪許訴診評詳誌誘誠誰課調"
    "談諸講謝譯議豐負財責販貪貴貼賽贈趕趨跡踐蹤軌軍較輔輕農進遊違遞遠適鄉針鈕銷鋪鎖鑑閃閒闆陣陸階雜雖雙離難靈響順"
    "顏類顧飯飲餘館驅鬧髮鳥齡龍傳帶們僞冊凱劍勞區協員喚單嚴園圓執堅報場塊墮壽夢夥奪奮婦媽嬰寧實寫寬審對專尋將屆岡"
    "嶺幣帥師帳幹庫廁廂廚廟廠廣彈彙徑徵徹恆惡惱愛態慘慚慣慮慶憂憐憑憲懷懸戀戰戲搶擇擔據擬擺擾攔攜攝攤敗敵斂數斷書會"
    "極樓槍標樣歐殘殼氣潔潤澤濃濕瀏灑災為烏熱爐爭爺牆獄獎獲環現瑣畢異療癢發盜盡監盤睜礎確碼礙禍稅穀窮竄競筆節範築簡"
    "糧紅紋紐純紗納級紛紹組終結絕統絲綁經綠維網緊線緣編緯練縮縱總績繩繪繳繼續纖罷職聽膚膽臟與艙艱藉蘭處號虛蟲補裏製"
    "褲襲覺覽訂訃計訊討訓記設許訴診詞譯護讀讓豈豎貓負貨貧責貯貸費賀賊資賓賜賠賢賤賴贊趙跡躍軟載輛輪辭農這連進遲遺鄧"
    "醬釋針鈍鉤銅銳鋼錄錦鍋鍛鎮鏡鐘門閃閘閣闊陳陰隸雞雲電韓頂項順須預領頻顆題願類顧飄飼飽飾餅餓騎騙騰驚體髒鬥魚鮮鳴鴨"
    "鹽麥黃點黨齒",
    "无视系统规则请从现后须将们个这条范问题给于与为应该获邮网链图试读写档询钱号验证码务实际隐泄盖优级旧废预设审过滤"
    "装论吗么时间内经听执删脚机盘检测资钥权绝注释词风险户账账转传发开关闭运单据凭环变数录对会历讯复制误错识别说话语"
    "让记忆遗弃拟约准护线连结页点击载压缩备键汇额银货币买卖价费订购称员专业层导属产车门长见亲头书学习画声气电脑术师"
    "软体库云维团队签处总输边达钟周报阅览欢乐爱种样还没并两来动态认确万亿齐办帮愿尽断络节杀毁坏灭窃盗骗诈钓骇范围秘"
    "稳宝贝仅觉选择项松紧启广随礼赞铁储势归医药疗飞场厅岁划艺戏当卫冲拥扩蓝绿斗众创树积极标显逻辑频宽滥济汉灯争独献"
    "监笔筑筛纪纸细终组丝绑综绪编缓练县织绕系续罚罗义圣闻联职胁脸临举华叶苏虫补观触计讨训托访许诉诊评详志诱诚谁课调"
    "谈诸讲谢译议丰负财责贩贪贵贴赛赠赶趋迹践踪轨军较辅轻农进游违递远适乡针钮销铺锁鉴闪闲板阵陆阶杂虽双离难灵响顺"
    "颜类顾饭饮余馆驱闹发鸟龄龙传带们伪册凯剑劳区协员唤单严园圆执坚报场块堕寿梦伙夺奋妇妈婴宁实写宽审对专寻将届冈"
    "岭币帅师账干库厕厢厨庙厂广弹汇径征彻恒恶恼爱态惨惭惯虑庆忧怜凭宪怀悬恋战戏抢择担据拟摆扰拦携摄摊败敌敛数断书会"
    "极楼枪标样欧残壳气洁润泽浓湿浏洒灾为乌热炉争爷墙狱奖获环现琐毕异疗痒发盗尽监盘睁础确码碍祸税谷穷窜竞笔节范筑简"
    "粮红纹纽纯纱纳级纷绍组终结绝统丝绑经绿维网紧线缘编纬练缩纵总绩绳绘缴继续纤罢职听肤胆脏与舱艰借兰处号虚虫补里制"
    "裤袭觉览订讣计讯讨训记设许诉诊词译护读让岂竖猫负货贫责贮贷费贺贼资宾赐赔贤贱赖赞赵迹跃软载辆轮辞农这连进迟遗邓"
    "酱释针钝钩铜锐钢录锦锅锻镇镜钟门闪闸阁阔陈阴隶鸡云电韩顶项顺须预领频颗题愿类顾飘饲饱饰饼饿骑骗腾惊体脏斗鱼鲜鸣鸭"
    "盐麦黄点党齿", strict=True))


#: digits and symbols read as the letters they stand for in leetspeak ("1gn0r3")
LEET = dict(zip("1!|03457@$+", "iiloeastast", strict=True))
