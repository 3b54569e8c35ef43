#!/usr/bin/env python3
"""Write the hand-written sample data of ``datasets/`` from the definitions in this file.

Every sample here is original content written for tooleval-agents (Apache-2.0). The files follow
the official formats and directory layout of UltraTool (JoeYing1019/UltraTool) and AppBench
(ruleGreen/AppBench) so the loaders, the workflows and the fast tests run without downloaded data.

UltraTool: each sample is written once, in English and Chinese side by side; the script derives
``test.json`` and the six ``test_set/<task>.json`` files of both languages (line i = sample i in
every file) with the upstream construction rules, and the ``example/<task>.json`` one-shot demos
from a seventh sample. AppBench: each call is written as ``(app, api, {arg: value})`` with
dependent arguments marked :class:`Dep`; the gold lines and the other ``output`` fields are derived.

Usage::

    python datasets/build_samples.py            # (re)write the files
    python datasets/build_samples.py --check    # exit 1 if a committed file differs

Standard library only, deterministic: the same definitions always give byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

HERE = Path(__file__).resolve().parent

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = ("en", "zh")
LANG_DIRS: dict[Lang, str] = {"en": "English-dataset", "zh": "Chinese-dataset"}
PARENT = "null"
TOOL_FREE: dict[Lang, str] = {"en": "No tool required", "zh": "不需要工具"}
TASKS = (
    "planning",
    "tool_creation_awareness",
    "tool_creation",
    "tool_usage_awareness",
    "tool_selection",
    "tool_usage",
)
TOOLSET_SIZE = 8
"""Toolset size of tool_selection / tool_creation_awareness (the paper's setting)."""
CREATION_TOOLSET_SIZE = 2
"""Toolset size of tool_creation (every upstream record has 2)."""


# --------------------------------------------------------------------------------------------
# UltraTool building blocks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class L:
    """A literal written differently per language (``L("Beijing", "北京")``); quoted in calls."""

    en: str
    zh: str

    def __call__(self, lang: Lang) -> str:
        return self.en if lang == "en" else self.zh


@dataclass(frozen=True)
class Ref:
    """An output of an earlier step, written ``<...>`` (unquoted unless ``quoted``)."""

    en: str
    zh: str
    quoted: bool = False

    def __call__(self, lang: Lang) -> str:
        return f"<{self.en if lang == 'en' else self.zh}>"


Value = str | int | float | bool | L | Ref | list[Any]


def _text(value: str | L, lang: Lang) -> str:
    return value(lang) if isinstance(value, L) else value


def render_value(value: Value, lang: Lang) -> str:
    """The value as the call string writes it (upstream style: Python-like, quotes unescaped)."""
    if isinstance(value, bool):  # before int: bool is an int
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Ref):
        return f"'{value(lang)}'" if value.quoted else value(lang)
    if isinstance(value, list):
        items = [f"'{v(lang)}'" if isinstance(v, Ref) else render_value(v, lang) for v in value]
        return "[" + ", ".join(items) + "]"
    return f"'{_text(value, lang)}'"


def param_value(value: Value, lang: Lang) -> str:
    """The value as ``tool_usage`` references store it: text with the outer quotes removed."""
    if isinstance(value, Ref):
        return value(lang)
    rendered = render_value(value, lang)
    return rendered[1:-1] if rendered.startswith("'") else rendered


@dataclass(frozen=True)
class Call:
    """A tool call of a plan step."""

    name: str
    args: tuple[tuple[str, Value], ...]

    def render(self, lang: Lang) -> str:
        inner = ", ".join(f"{k}={render_value(v, lang)}" for k, v in self.args)
        return f"{self.name}({inner})"

    def params(self, lang: Lang) -> dict[str, str]:
        return {k: param_value(v, lang) for k, v in self.args}


def C(name: str, **args: Value) -> Call:
    return Call(name, tuple(args.items()))


NULL = "NULL"
FREE = "FREE"


@dataclass(frozen=True)
class Step:
    """A plan step: depth (1 = ``1.``, 2 = ``1.1``, 3 = ``1.1.1``), text, and what it needs."""

    depth: int
    en: str
    zh: str
    tool: Call | str
    """A :class:`Call`, ``NULL`` (top-level step with sub-steps) or ``FREE`` (no tool)."""


def S(depth: int, en: str, zh: str, tool: Call | str = FREE) -> Step:
    return Step(depth, en, zh, tool)


@dataclass(frozen=True)
class Prop:
    """An argument or result of a tool skeleton."""

    name: str
    type: str
    en: str
    zh: str
    extra: tuple[tuple[str, Any], ...] = ()


def P(name: str, type_: str, en: str, zh: str, **extra: Any) -> Prop:
    return Prop(name, type_, en, zh, tuple(extra.items()))


@dataclass(frozen=True)
class Tool:
    """A tool skeleton in both languages."""

    name: str
    en: str
    zh: str
    args: tuple[Prop, ...]
    results: tuple[Prop, ...]

    def skeleton(self, lang: Lang) -> dict[str, Any]:
        def props(items: tuple[Prop, ...]) -> dict[str, Any]:
            return {
                p.name: {"description": p.en if lang == "en" else p.zh, "type": p.type,
                         **dict(p.extra)}
                for p in items
            }

        return {
            "name": self.name,
            "description": self.en if lang == "en" else self.zh,
            "arguments": {"type": "object", "properties": props(self.args)},
            "results": {"type": "object", "properties": props(self.results)},
        }


def T(name: str, en: str, zh: str, args: list[Prop], results: list[Prop]) -> Tool:
    return Tool(name, en, zh, tuple(args), tuple(results))


@dataclass(frozen=True)
class Sample:
    """A raw UltraTool sample and the choices that derive its test-set records."""

    domain: str
    question: L
    tools: tuple[str, ...]
    """The tools the plan calls, in skeleton order."""
    plan: tuple[Step, ...]
    created: tuple[str, ...]
    """Tools removed for ``tool_creation`` (the first step calling each one is asked)."""
    missing: tuple[str, ...]
    """Tools absent from the ``tool_creation_awareness`` toolset (label ``"1"``)."""
    distractors: tuple[str, ...]
    """Look-alike and other tools that fill the 8-tool toolsets, most confusable first."""


# --------------------------------------------------------------------------------------------
# UltraTool tools
# --------------------------------------------------------------------------------------------

_DATE = {"format": "date"}
_STR_ITEMS = {"items": {"type": "string"}}

TOOL_LIST: list[Tool] = [
    # Files
    T("folder_create", "Create a folder at the given path; missing parent folders are created too.",
      "在指定路径创建文件夹，不存在的上级文件夹会一并创建。",
      [P("folder_path", "string", "Path of the folder to create", "要创建的文件夹路径")],
      [P("status", "boolean", "Whether the folder was created", "文件夹是否创建成功")]),
    T("file_copy", "Copy a file to another location and keep the original.",
      "将文件复制到另一个位置，保留原文件。",
      [P("source_path", "string", "Path of the file to copy", "要复制的文件路径"),
       P("destination_path", "string", "Path of the copy, including its file name",
         "副本的路径（包含文件名）"),
       P("overwrite", "boolean", "Whether to replace a file already at the destination",
         "目标位置已有文件时是否覆盖")],
      [P("new_file_path", "string", "Path of the created copy", "生成的副本路径")]),
    T("file_delete", "Delete the file at the given path.", "删除指定路径的文件。",
      [P("file_path", "string", "Path of the file to delete", "要删除的文件路径")],
      [P("status", "boolean", "Whether the file was deleted", "文件是否删除成功")]),
    T("folder_delete", "Delete a folder and everything inside it.", "删除文件夹及其中的所有内容。",
      [P("folder_path", "string", "Path of the folder to delete", "要删除的文件夹路径")],
      [P("status", "boolean", "Whether the folder was deleted", "文件夹是否删除成功")]),
    T("file_move", "Move a file to another location; the original is removed.",
      "将文件移动到另一个位置，原位置不再保留。",
      [P("source_path", "string", "Path of the file to move", "要移动的文件路径"),
       P("destination_path", "string", "New path of the file", "文件的新路径")],
      [P("new_file_path", "string", "Path of the moved file", "移动后的文件路径")]),
    T("file_rename", "Rename a file without moving it.", "重命名文件，不改变其所在位置。",
      [P("file_path", "string", "Path of the file to rename", "要重命名的文件路径"),
       P("new_name", "string", "New file name", "新的文件名")],
      [P("status", "boolean", "Whether the file was renamed", "是否重命名成功")]),
    T("file_read", "Read the text content of a file.", "读取文件的文本内容。",
      [P("file_path", "string", "Path of the file to read", "要读取的文件路径")],
      [P("content", "string", "Text content of the file", "文件的文本内容")]),
    T("file_write", "Write text into a file, creating the file if needed.",
      "向文件写入文本，文件不存在时自动创建。",
      [P("file_path", "string", "Path of the file to write", "要写入的文件路径"),
       P("content", "string", "Text to write", "要写入的文本")],
      [P("status", "boolean", "Whether the text was written", "是否写入成功")]),
    # Flights and travel
    T("flight_search", "Search the flights between two cities on a given date.",
      "查询指定日期两个城市之间的航班。",
      [P("departure_city", "string", "City of departure", "出发城市"),
       P("arrival_city", "string", "City of arrival", "到达城市"),
       P("departure_date", "string", "Date of departure, YYYY-MM-DD", "出发日期，格式为YYYY-MM-DD",
         **_DATE),
       P("cabin_class", "string", "Cabin class", "舱位等级",
         enum=["economy", "premium_economy", "business", "first"])],
      [P("flights", "array", "Matching flights, each with flight number, times and price",
         "符合条件的航班列表，每项包含航班号、起降时间和票价", items={"type": "object"})]),
    T("select_cheapest_flight", "Pick the flight with the lowest price from a list of flights.",
      "从航班列表中选出票价最低的航班。",
      [P("flights", "array", "The flights to compare", "要比较的航班列表",
         items={"type": "object"})],
      [P("flight_number", "string", "Flight number of the cheapest flight", "最便宜航班的航班号"),
       P("price", "number", "Its ticket price", "该航班的票价")]),
    T("flight_reserve", "Reserve a seat on a flight for a passenger.", "为乘客预订指定航班的座位。",
      [P("flight_number", "string", "Flight number", "航班号"),
       P("passenger_name", "string", "Full name of the passenger", "乘客姓名"),
       P("cabin_class", "string", "Cabin class", "舱位等级",
         enum=["economy", "premium_economy", "business", "first"])],
      [P("booking_number", "string", "Booking reference", "预订编号"),
       P("success", "boolean", "Whether the seat was reserved", "是否预订成功")]),
    T("train_search", "Search the trains between two cities on a given date.",
      "查询指定日期两个城市之间的火车车次。",
      [P("departure_city", "string", "City of departure", "出发城市"),
       P("arrival_city", "string", "City of arrival", "到达城市"),
       P("departure_date", "string", "Date of departure, YYYY-MM-DD", "出发日期，格式为YYYY-MM-DD",
         **_DATE)],
      [P("trains", "array", "Matching trains with times and fares", "符合条件的车次及时间、票价",
         items={"type": "object"})]),
    T("flight_status_query", "Get the live status of a flight (on time, delayed, cancelled).",
      "查询航班的实时状态（准点、延误、取消）。",
      [P("flight_number", "string", "Flight number", "航班号"),
       P("date", "string", "Date of the flight, YYYY-MM-DD", "航班日期，格式为YYYY-MM-DD",
         **_DATE)],
      [P("status", "string", "Current status of the flight", "航班当前状态")]),
    T("hotel_search", "Search hotels in a city for the given stay.",
      "查询城市中满足入住日期的酒店。",
      [P("city", "string", "City to stay in", "入住城市"),
       P("check_in_date", "string", "Check-in date, YYYY-MM-DD", "入住日期，格式为YYYY-MM-DD",
         **_DATE),
       P("check_out_date", "string", "Check-out date, YYYY-MM-DD", "退房日期，格式为YYYY-MM-DD",
         **_DATE)],
      [P("hotels", "array", "Available hotels with prices", "可预订的酒店及价格",
         items={"type": "object"})]),
    T("flight_cancel", "Cancel a flight booking and request a refund.", "取消机票预订并申请退款。",
      [P("booking_number", "string", "Booking reference to cancel", "要取消的预订编号")],
      [P("refund_amount", "number", "Amount refunded", "退款金额")]),
    # Finance
    T("exchange_rate_query", "Query the latest exchange rate between two currencies.",
      "查询两种货币之间的最新汇率。",
      [P("base_currency", "string", "ISO 4217 code of the currency to convert from",
         "源货币的ISO 4217代码"),
       P("target_currency", "string", "ISO 4217 code of the currency to convert to",
         "目标货币的ISO 4217代码")],
      [P("rate", "number", "Units of the target currency per unit of the base currency",
         "每单位源货币可兑换的目标货币数量")]),
    T("currency_convert", "Convert an amount of money with a given exchange rate.",
      "按给定汇率换算金额。",
      [P("amount", "number", "Amount in the base currency", "源货币金额"),
       P("rate", "number", "Exchange rate to apply", "使用的汇率")],
      [P("converted_amount", "number", "Amount in the target currency", "换算后的目标货币金额")]),
    T("bank_transfer", "Transfer money from one bank account to another.",
      "从一个银行账户向另一个账户转账。",
      [P("from_account", "string", "Account number to pay from", "转出账号"),
       P("to_account", "string", "Account number to pay to", "转入账号"),
       P("amount", "number", "Amount to transfer", "转账金额"),
       P("remark", "string", "Note shown to the receiver", "转账附言")],
      [P("transaction_id", "string", "ID of the transfer", "交易编号"),
       P("success", "boolean", "Whether the transfer went through", "转账是否成功")]),
    T("stock_price_query", "Get the latest price of a stock.", "查询股票的最新价格。",
      [P("stock_code", "string", "Ticker symbol of the stock", "股票代码")],
      [P("price", "number", "Latest price", "最新价格")]),
    T("account_balance_query", "Get the balance of a bank account.", "查询银行账户余额。",
      [P("account_number", "string", "Account number", "账号")],
      [P("balance", "number", "Current balance", "当前余额")]),
    T("loan_calculate", "Calculate the monthly payment of a loan.", "计算贷款的月供。",
      [P("principal", "number", "Amount borrowed", "贷款本金"),
       P("annual_rate", "number", "Annual interest rate in percent", "年利率（百分比）"),
       P("months", "integer", "Number of monthly payments", "还款月数")],
      [P("monthly_payment", "number", "Amount to pay each month", "每月还款金额")]),
    # Weather and reminders
    T("weather_forecast", "Get the weather forecast of a city for a given date.",
      "查询城市在指定日期的天气预报。",
      [P("city", "string", "City name", "城市名称"),
       P("date", "string", "Date of the forecast, YYYY-MM-DD", "预报日期，格式为YYYY-MM-DD",
         **_DATE)],
      [P("weather", "string", "Weather description, e.g. light rain", "天气描述，如小雨"),
       P("rain_probability", "integer", "Chance of rain in percent", "降雨概率（百分比）"),
       P("temperature", "number", "Average temperature in degrees Celsius", "平均气温（摄氏度）")]),
    T("reminder_set", "Create a reminder that alerts the user at the given time.",
      "创建一个在指定时间提醒用户的提醒事项。",
      [P("time", "string", "When to remind, YYYY-MM-DD HH:MM", "提醒时间，格式为YYYY-MM-DD HH:MM"),
       P("content", "string", "What to remind the user of", "提醒内容"),
       P("repeat", "boolean", "Whether the reminder repeats every day", "是否每天重复")],
      [P("reminder_id", "string", "ID of the reminder", "提醒编号")]),
    T("air_quality_query", "Get the current air quality index of a city.",
      "查询城市当前的空气质量指数。",
      [P("city", "string", "City name", "城市名称")],
      [P("aqi", "integer", "Air quality index", "空气质量指数")]),
    T("alarm_set", "Set an alarm clock on the phone.", "在手机上设置闹钟。",
      [P("time", "string", "Alarm time, HH:MM", "闹钟时间，格式为HH:MM"),
       P("label", "string", "Label shown when the alarm rings", "闹钟响起时显示的标签")],
      [P("alarm_id", "string", "ID of the alarm", "闹钟编号")]),
    T("weather_history_query", "Get the recorded weather of a city on a past date.",
      "查询城市在过去某一天的历史天气。",
      [P("city", "string", "City name", "城市名称"),
       P("date", "string", "Past date, YYYY-MM-DD", "过去的日期，格式为YYYY-MM-DD", **_DATE)],
      [P("weather", "string", "Recorded weather", "当天的天气记录")]),
    # Calendar and messages
    T("calendar_check_availability", "Check whether all participants are free in a time slot.",
      "检查所有参会人在某个时间段是否有空。",
      [P("participants", "array", "Names of the participants", "参会人姓名列表", **_STR_ITEMS),
       P("date", "string", "Date, YYYY-MM-DD", "日期，格式为YYYY-MM-DD", **_DATE),
       P("start_time", "string", "Start time, HH:MM", "开始时间，格式为HH:MM"),
       P("duration_minutes", "integer", "Length of the slot in minutes", "时长（分钟）")],
      [P("available", "boolean", "Whether everyone is free", "是否所有人都有空"),
       P("busy_participants", "array", "Participants who are busy", "没空的参会人",
         **_STR_ITEMS)]),
    T("calendar_event_create", "Create an event in the shared calendar and invite participants.",
      "在共享日历中创建日程并邀请参会人。",
      [P("title", "string", "Title of the event", "日程标题"),
       P("date", "string", "Date, YYYY-MM-DD", "日期，格式为YYYY-MM-DD", **_DATE),
       P("start_time", "string", "Start time, HH:MM", "开始时间，格式为HH:MM"),
       P("duration_minutes", "integer", "Length of the event in minutes", "时长（分钟）"),
       P("location", "string", "Where the event takes place", "地点"),
       P("participants", "array", "Names of the participants", "参会人姓名列表", **_STR_ITEMS)],
      [P("event_id", "string", "ID of the created event", "创建的日程编号")]),
    T("email_send", "Send an email.", "发送电子邮件。",
      [P("recipients", "array", "Email addresses of the recipients", "收件人邮箱地址列表",
         **_STR_ITEMS),
       P("subject", "string", "Subject line", "邮件主题"),
       P("body", "string", "Text of the email", "邮件正文")],
      [P("status", "boolean", "Whether the email was sent", "是否发送成功")]),
    T("calendar_event_delete", "Delete an event from the calendar.", "从日历中删除日程。",
      [P("event_id", "string", "ID of the event to delete", "要删除的日程编号")],
      [P("status", "boolean", "Whether the event was deleted", "是否删除成功")]),
    T("contact_search", "Look up a contact's email address and phone number by name.",
      "按姓名查找联系人的邮箱和电话。",
      [P("name", "string", "Name of the contact", "联系人姓名")],
      [P("email", "string", "Email address", "邮箱地址"),
       P("phone_number", "string", "Phone number", "电话号码")]),
    T("sms_send", "Send a text message to a phone number.", "向手机号码发送短信。",
      [P("phone_number", "string", "Phone number of the receiver", "接收人手机号码"),
       P("message", "string", "Text of the message", "短信内容")],
      [P("status", "boolean", "Whether the message was sent", "是否发送成功")]),
    # Shopping
    T("product_search", "Search products in the shopping app.", "在购物App中搜索商品。",
      [P("keyword", "string", "Search words", "搜索关键词"),
       P("size", "string", "Size of the product", "商品尺码"),
       P("max_price", "number", "Highest acceptable price in yuan", "可接受的最高价格（元）"),
       P("sort_by", "string", "Order of the results", "结果排序方式",
         enum=["price", "rating", "sales"])],
      [P("products", "array", "Matching products with ID, price and rating",
         "符合条件的商品及其编号、价格和评分", items={"type": "object"})]),
    T("cart_add", "Add a product to the shopping cart.", "将商品加入购物车。",
      [P("product_id", "string", "ID of the product", "商品编号"),
       P("quantity", "integer", "Number of items", "数量")],
      [P("cart_id", "string", "ID of the cart", "购物车编号")]),
    T("order_place", "Place an order for the items in a cart.", "为购物车中的商品下单。",
      [P("cart_id", "string", "ID of the cart", "购物车编号"),
       P("shipping_address", "string", "Delivery address", "收货地址"),
       P("payment_method", "string", "How to pay", "支付方式",
         enum=["alipay", "wechat_pay", "credit_card"])],
      [P("order_id", "string", "ID of the order", "订单编号"),
       P("total_price", "number", "Amount charged", "实付金额")]),
    T("product_compare", "Compare several products side by side.", "并排比较多个商品。",
      [P("product_ids", "array", "IDs of the products to compare", "要比较的商品编号列表",
         **_STR_ITEMS)],
      [P("comparison", "string", "Summary of the differences", "差异总结")]),
    T("order_track", "Track the delivery of an order.", "查询订单的物流状态。",
      [P("order_id", "string", "ID of the order", "订单编号")],
      [P("status", "string", "Delivery status", "物流状态")]),
    T("coupon_apply", "Apply a coupon code to a cart.", "在购物车中使用优惠券。",
      [P("cart_id", "string", "ID of the cart", "购物车编号"),
       P("coupon_code", "string", "Coupon code", "优惠码")],
      [P("discount", "number", "Discount obtained in yuan", "优惠金额（元）")]),
    # Bills (the one-shot demo)
    T("bill_split", "Split a bill evenly among several people.", "将账单金额平均分摊给多人。",
      [P("total_amount", "number", "Total of the bill", "账单总金额"),
       P("people", "integer", "Number of people sharing the bill", "分摊人数")],
      [P("amount_per_person", "number", "Share of each person", "每人应付金额")]),
    T("payment_request_send", "Send payment requests to friends in the payment app.",
      "在支付App中向好友发送收款请求。",
      [P("payees", "array", "Names of the friends who should pay", "需要付款的好友姓名列表",
         **_STR_ITEMS),
       P("amount", "number", "Amount each friend should pay", "每位好友应付金额"),
       P("note", "string", "Note shown with the request", "收款备注")],
      [P("request_ids", "array", "IDs of the sent requests", "已发送的收款请求编号",
         **_STR_ITEMS)]),
    # Unrelated to every sample: fill the 2-tool tool_creation toolsets
    T("recipe_search", "Find recipes that use a given ingredient.", "查找使用指定食材的菜谱。",
      [P("ingredient", "string", "Main ingredient", "主要食材")],
      [P("recipes", "array", "Recipe names", "菜谱名称列表", **_STR_ITEMS)]),
    T("text_translate", "Translate text into another language.", "将文本翻译成另一种语言。",
      [P("text", "string", "Text to translate", "要翻译的文本"),
       P("target_language", "string", "Language to translate into", "目标语言")],
      [P("translation", "string", "Translated text", "翻译结果")]),
    T("music_play", "Play a song on the phone.", "在手机上播放歌曲。",
      [P("song_name", "string", "Name of the song", "歌曲名称")],
      [P("status", "boolean", "Whether playback started", "是否开始播放")]),
    T("taxi_call", "Call a taxi between two places.", "叫一辆出租车往返两地。",
      [P("pickup_location", "string", "Where to be picked up", "上车地点"),
       P("destination", "string", "Where to go", "目的地")],
      [P("driver_phone", "string", "Phone number of the driver", "司机电话")]),
]
TOOLS: dict[str, Tool] = {t.name: t for t in TOOL_LIST}
UNRELATED = ("recipe_search", "text_translate", "music_play", "taxi_call", "air_quality_query",
             "stock_price_query", "order_track", "hotel_search")
"""Pool for the tool_creation toolsets, taken in rotation per sample."""


# --------------------------------------------------------------------------------------------
# UltraTool samples (test.json line i = SAMPLES[i]) and the one-shot demo
# --------------------------------------------------------------------------------------------

_APRIL = L("D:/Work/sales_april.xlsx", "D:/工作/四月销售.xlsx")
_MAY = L("D:/Work/sales_may.xlsx", "D:/工作/五月销售.xlsx")
_ZHANG, _WANG = L("Zhang Wei", "张伟"), L("Wang Fang", "王芳")

SAMPLES: list[Sample] = [
    Sample(
        domain="Document",
        question=L(
            "Please create a folder named 'Q2 Reports' under D:/Work, copy sales_april.xlsx and "
            "sales_may.xlsx from D:/Work into it, and then delete the two original files.\n",
            "请在D:/工作下新建一个名为“第二季度报告”的文件夹，把D:/工作里的四月销售.xlsx和"
            "五月销售.xlsx复制进去，然后删除这两个原文件。\n",
        ),
        tools=("folder_create", "file_copy", "file_delete"),
        plan=(
            S(1, "Create the report folder", "创建报告文件夹", NULL),
            S(2, "Obtain the folder information (Folder path: D:/Work/Q2 Reports)",
              "获取文件夹信息（文件夹路径：D:/工作/第二季度报告）"),
            S(2, "Create the folder", "创建文件夹",
              C("folder_create", folder_path=L("D:/Work/Q2 Reports", "D:/工作/第二季度报告"))),
            S(1, "Copy the sales files into the folder", "将销售文件复制到文件夹中", NULL),
            S(2, "Copy the April sales file", "复制四月销售文件",
              C("file_copy", source_path=_APRIL,
                destination_path=L("D:/Work/Q2 Reports/sales_april.xlsx",
                                   "D:/工作/第二季度报告/四月销售.xlsx"))),
            S(2, "Copy the May sales file", "复制五月销售文件",
              C("file_copy", source_path=_MAY,
                destination_path=L("D:/Work/Q2 Reports/sales_may.xlsx",
                                   "D:/工作/第二季度报告/五月销售.xlsx"))),
            S(2, "Confirm that both copies are in the new folder", "确认两个副本都已在新文件夹中"),
            S(1, "Delete the original files", "删除原文件", NULL),
            S(2, "Delete the original April sales file", "删除原四月销售文件",
              C("file_delete", file_path=_APRIL)),
            S(2, "Delete the original May sales file", "删除原五月销售文件",
              C("file_delete", file_path=_MAY)),
            S(2, "Confirm that the deletion succeeded", "确认删除成功"),
        ),
        created=("file_copy",),
        missing=("file_delete",),
        distractors=("folder_delete", "file_move", "file_rename", "file_read", "file_write",
                     "email_send", "text_translate"),
    ),
    Sample(
        domain="Flight",
        question=L(
            "I'm flying from Beijing to Shanghai on May 1, 2024. Find the cheapest economy flight "
            "that day, book it for the passenger Li Ming, and tell me the booking number.\n",
            "我要在2024年5月1日从北京飞上海，帮我找当天最便宜的经济舱航班，为乘客李明预订，"
            "并告诉我预订编号。\n",
        ),
        tools=("flight_search", "select_cheapest_flight", "flight_reserve"),
        plan=(
            S(1, "Search for flights", "查询航班", NULL),
            S(2, "Obtain the trip information (Departure city: Beijing, Arrival city: Shanghai, "
                 "Departure date: 2024-05-01, Cabin class: economy)",
              "获取行程信息（出发城市：北京，到达城市：上海，出发日期：2024-05-01，舱位：经济舱）"),
            S(2, "Query the economy flights of that day", "查询当天的经济舱航班",
              C("flight_search", departure_city=L("Beijing", "北京"),
                arrival_city=L("Shanghai", "上海"), departure_date="2024-05-01",
                cabin_class="economy")),
            S(2, "Obtain the flight list (Flight list: flights found)",
              "获取航班列表（航班列表：查询到的航班）"),
            S(1, "Book the cheapest flight", "预订最便宜的航班", NULL),
            S(2, "Choose the cheapest flight", "选出最便宜的航班"),
            S(3, "Compare the ticket prices in the flight list", "比较航班列表中的票价",
              C("select_cheapest_flight", flights=Ref("flight list", "航班列表"))),
            S(3, "Record the chosen flight (Flight number: cheapest flight number)",
              "记录选中的航班（航班号：最便宜的航班号）"),
            S(2, "Reserve a seat for the passenger", "为乘客预订座位",
              C("flight_reserve", flight_number=Ref("cheapest flight number", "最便宜的航班号"),
                passenger_name=L("Li Ming", "李明"), cabin_class="economy")),
            S(2, "Tell the user the booking number (Booking number: booking number returned)",
              "告知用户预订编号（预订编号：返回的预订编号）"),
        ),
        created=("select_cheapest_flight", "flight_reserve"),
        missing=("select_cheapest_flight",),
        distractors=("train_search", "flight_status_query", "flight_cancel", "hotel_search",
                     "weather_forecast", "taxi_call", "bank_transfer"),
    ),
    Sample(
        domain="Finance",
        question=L(
            "I have 2000 euros. Check today's euro to yuan exchange rate, work out how many yuan "
            "that is, and transfer that amount from my account 6222020011 to my wife's account "
            "6222020099.\n",
            "我有2000欧元。帮我查一下今天欧元兑人民币的汇率，算出能换多少人民币，再把这笔钱从"
            "我的账户6222020011转到我妻子的账户6222020099。\n",
        ),
        tools=("exchange_rate_query", "currency_convert", "bank_transfer"),
        plan=(
            S(1, "Query the exchange rate", "查询汇率", NULL),
            S(2, "Obtain the currency pair (Currency pair: EUR/CNY)",
              "获取货币对信息（货币对：EUR/CNY）"),
            S(2, "Query today's euro to yuan exchange rate", "查询今天欧元兑人民币的汇率",
              C("exchange_rate_query", base_currency="EUR", target_currency="CNY")),
            S(1, "Calculate the converted amount", "计算兑换金额", NULL),
            S(2, "Obtain the amount to convert (Amount: 2000 euros)",
              "获取兑换金额信息（金额：2000欧元）"),
            S(2, "Convert the amount at the current rate", "按当前汇率换算金额",
              C("currency_convert", amount=2000,
                rate=Ref("EUR to CNY exchange rate", "欧元兑人民币汇率"))),
            S(2, "Obtain the result (Amount in yuan: converted amount)",
              "获取换算结果（人民币金额：换算后的金额）"),
            S(1, "Transfer the money", "转账", NULL),
            S(2, "Obtain the account information (From account: 6222020011, "
                 "To account: 6222020099)",
              "获取账户信息（转出账户：6222020011，转入账户：6222020099）"),
            S(2, "Transfer the converted amount", "转出换算后的金额",
              C("bank_transfer", from_account="6222020011", to_account="6222020099",
                amount=Ref("converted amount", "换算后的金额"),
                remark=L("Currency exchange", "货币兑换"))),
            S(2, "Confirm that the transfer succeeded", "确认转账成功"),
        ),
        created=("currency_convert",),
        missing=(),
        distractors=("stock_price_query", "account_balance_query", "loan_calculate", "bill_split",
                     "cart_add", "sms_send", "recipe_search"),
    ),
    Sample(
        domain="Weather",
        question=L(
            "Will it rain in Hangzhou tomorrow (April 12, 2024)? If the chance of rain is above "
            "60%, set a reminder for 7:30 tomorrow morning to take an umbrella.\n",
            "明天（2024年4月12日）杭州会下雨吗？如果降雨概率超过60%，帮我设一个明早7:30的提醒，"
            "提醒我带伞。\n",
        ),
        tools=("weather_forecast", "reminder_set"),
        plan=(
            S(1, "Check tomorrow's weather", "查询明天的天气", NULL),
            S(2, "Obtain the query information (City: Hangzhou, Date: 2024-04-12)",
              "获取查询信息（城市：杭州，日期：2024-04-12）"),
            S(2, "Query the weather forecast", "查询天气预报",
              C("weather_forecast", city=L("Hangzhou", "杭州"), date="2024-04-12")),
            S(2, "Obtain the chance of rain (Chance of rain: forecast chance of rain)",
              "获取降雨概率（降雨概率：预报的降雨概率）"),
            S(1, "Set an umbrella reminder if needed", "根据需要设置带伞提醒", NULL),
            S(2, "Compare the chance of rain with 60%", "将降雨概率与60%进行比较"),
            S(2, "Set the reminder", "设置提醒"),
            S(3, "Create a reminder for 07:30 tomorrow", "创建明早07:30的提醒",
              C("reminder_set", time="2024-04-12 07:30",
                content=L("Take an umbrella, it's going to rain", "带伞，明天有雨"),
                repeat=False)),
            S(3, "Confirm that the reminder was created", "确认提醒已创建"),
        ),
        created=("weather_forecast", "reminder_set"),
        missing=("reminder_set",),
        distractors=("air_quality_query", "alarm_set", "weather_history_query",
                     "calendar_event_create", "sms_send", "music_play", "flight_status_query"),
    ),
    Sample(
        domain="Meeting",
        question=L(
            "Arrange a 45-minute project review with Zhang Wei and Wang Fang next Tuesday, "
            "May 14, 2024, at 3 pm in Meeting Room B, and email both of them the invitation.\n",
            "帮我安排下周二（2024年5月14日）下午3点和张伟、王芳开一个45分钟的项目评审会，"
            "地点在B会议室，并给他们两人发邮件邀请。\n",
        ),
        tools=("calendar_check_availability", "calendar_event_create", "email_send"),
        plan=(
            S(1, "Check the participants' availability", "确认参会人是否有空", NULL),
            S(2, "Obtain the meeting information (Participants: Zhang Wei, Wang Fang, "
                 "Date: 2024-05-14, Start time: 15:00, Duration: 45 minutes)",
              "获取会议信息（参会人：张伟、王芳，日期：2024-05-14，开始时间：15:00，时长：45分钟）"),
            S(2, "Check whether everyone is free at that time", "检查所有人在该时间是否有空",
              C("calendar_check_availability", participants=[_ZHANG, _WANG], date="2024-05-14",
                start_time="15:00", duration_minutes=45)),
            S(1, "Create the meeting", "创建会议", NULL),
            S(2, "Add the meeting to the calendar", "将会议添加到日历",
              C("calendar_event_create", title=L("Project review", "项目评审会"),
                date="2024-05-14", start_time="15:00", duration_minutes=45,
                location=L("Meeting Room B", "B会议室"), participants=[_ZHANG, _WANG])),
            S(2, "Obtain the meeting ID (Meeting ID: ID of the created meeting)",
              "获取会议编号（会议编号：创建的会议编号）"),
            S(1, "Send the invitations", "发送邀请", NULL),
            S(2, "Obtain the email addresses (Zhang Wei: zhang.wei@example.com, "
                 "Wang Fang: wang.fang@example.com)",
              "获取邮箱地址（张伟：zhang.wei@example.com，王芳：wang.fang@example.com）"),
            S(2, "Email the invitation to both participants", "给两位参会人发送邀请邮件",
              C("email_send", recipients=["zhang.wei@example.com", "wang.fang@example.com"],
                subject=L("Invitation: project review on May 14", "邀请：5月14日项目评审会"),
                body=L("Let's meet on 2024-05-14 at 15:00 in Meeting Room B for the project "
                       "review (meeting ID: <meeting ID>).",
                       "请于2024-05-14 15:00到B会议室参加项目评审会（会议编号：<会议编号>）。"))),
            S(2, "Confirm that the emails were sent", "确认邮件已发送"),
        ),
        created=("calendar_check_availability",),
        missing=("calendar_check_availability", "email_send"),
        distractors=("calendar_event_delete", "contact_search", "sms_send", "reminder_set",
                     "alarm_set", "file_write", "taxi_call"),
    ),
    Sample(
        domain="Shopping",
        question=L(
            "Find running shoes in size 42 under 500 yuan on the shopping app, put the best-rated "
            "pair in my cart, and order it for delivery to Room 301, 18 Xinhua Road, Hangzhou, "
            "paying with Alipay.\n",
            "在购物App上帮我找42码、500元以内的跑鞋，把评分最高的那双加入购物车，然后下单，"
            "收货地址是杭州市新华路18号301室，用支付宝付款。\n",
        ),
        tools=("product_search", "cart_add", "order_place"),
        plan=(
            S(1, "Search for running shoes", "搜索跑鞋", NULL),
            S(2, "Obtain the search conditions (Keyword: running shoes, Size: 42, "
                 "Maximum price: 500 yuan)",
              "获取搜索条件（关键词：跑鞋，尺码：42，最高价格：500元）"),
            S(2, "Search the products, best rated first", "按评分从高到低搜索商品",
              C("product_search", keyword=L("running shoes", "跑鞋"), size="42", max_price=500,
                sort_by="rating")),
            S(2, "Obtain the best-rated product (Product ID: ID of the best-rated product)",
              "获取评分最高的商品（商品编号：评分最高的商品编号）"),
            S(1, "Place the order", "下单", NULL),
            S(2, "Add the shoes to the cart", "将跑鞋加入购物车",
              C("cart_add", product_id=Ref("ID of the best-rated product", "评分最高的商品编号"),
                quantity=1)),
            S(2, "Order the items in the cart", "为购物车中的商品下单",
              C("order_place", cart_id=Ref("cart ID", "购物车编号", quoted=True),
                shipping_address=L("Room 301, 18 Xinhua Road, Hangzhou", "杭州市新华路18号301室"),
                payment_method="alipay")),
            S(2, "Tell the user the order number and the amount paid",
              "告知用户订单编号和实付金额"),
        ),
        created=("cart_add",),
        missing=("order_place",),
        distractors=("product_compare", "order_track", "coupon_apply", "bank_transfer",
                     "hotel_search", "recipe_search", "music_play"),
    ),
]

DEMO = Sample(
    domain="Restaurant",
    question=L(
        "Four of us had dinner and the bill came to 360 yuan. Split it evenly and send payment "
        "requests to Chen Jie, Liu Yang and Zhao Lei.",
        "我们四个人吃饭一共花了360元，帮我平均分摊，并向陈杰、刘洋和赵磊发送收款请求。",
    ),
    tools=("bill_split", "payment_request_send"),
    plan=(
        S(1, "Calculate each person's share", "计算每人应付金额", NULL),
        S(2, "Obtain the bill information (Total amount: 360 yuan, Number of people: 4)",
          "获取账单信息（总金额：360元，人数：4）"),
        S(2, "Split the bill evenly", "平均分摊账单",
          C("bill_split", total_amount=360, people=4)),
        S(2, "Obtain each person's share (Amount per person: calculated share)",
          "获取每人应付金额（每人金额：计算得到的金额）"),
        S(1, "Request payment from the friends", "向好友收款", NULL),
        S(2, "Send the payment requests", "发送收款请求",
          C("payment_request_send",
            payees=[L("Chen Jie", "陈杰"), L("Liu Yang", "刘洋"), L("Zhao Lei", "赵磊")],
            amount=Ref("amount per person", "每人应付金额"), note=L("Dinner bill", "晚餐费用"))),
        S(2, "Confirm that the requests were sent", "确认收款请求已发送"),
    ),
    created=("bill_split",),
    missing=("bill_split",),
    distractors=("bank_transfer", "currency_convert", "account_balance_query", "sms_send",
                 "loan_calculate", "email_send", "stock_price_query"),
)


# --------------------------------------------------------------------------------------------
# UltraTool derivation (the official construction rules)
# --------------------------------------------------------------------------------------------


def numbered(plan: tuple[Step, ...]) -> list[str]:
    """Hierarchical step numbers: ``1.``, ``1.1``, ``1.1.1`` ..."""
    counters: list[int] = []
    out = []
    for step in plan:
        if step.depth > len(counters) + 1 or step.depth < 1:
            raise ValueError(f"depth jumps to {step.depth} at {step.en!r}")
        counters = counters[: step.depth]
        if len(counters) < step.depth:
            counters.append(0)
        counters[-1] += 1
        number = ".".join(map(str, counters))
        out.append(number + "." if step.depth == 1 else number)
    return out


@dataclass
class Built:
    """One sample rendered in one language."""

    sample: Sample
    lang: Lang
    steps: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    """Plan ``tool`` field per step."""

    def skeleton(self, name: str) -> dict[str, Any]:
        return TOOLS[name].skeleton(self.lang)


def check_sample(sample: Sample) -> None:
    """Reject inconsistent definitions before anything is written."""
    called = [s.tool.name for s in sample.plan if isinstance(s.tool, Call)]
    if set(called) != set(sample.tools):
        raise ValueError(f"{sample.domain}: tools {sample.tools} but calls {called}")
    for step, nxt in zip(sample.plan, (*sample.plan[1:], None), strict=True):
        has_children = nxt is not None and nxt.depth > step.depth
        if step.tool == NULL and not (step.depth == 1 and has_children):
            raise ValueError(f"{step.en!r}: null only for top-level steps with sub-steps")
        if isinstance(step.tool, Call):
            if has_children:
                raise ValueError(f"{step.en!r}: a tool-call step cannot have sub-steps")
            unknown = {k for k, _ in step.tool.args} - {a.name for a in TOOLS[step.tool.name].args}
            if unknown:
                raise ValueError(f"{step.en!r}: unknown arguments {unknown}")
    for names in (sample.created, sample.missing):
        if not set(names) <= set(sample.tools):
            raise ValueError(f"{sample.domain}: {names} are not tools of the sample")
    clash = set(sample.distractors) & set(sample.tools)
    if clash:
        raise ValueError(f"{sample.domain}: distractors {clash} are tools of the sample")


def build_sample(sample: Sample, lang: Lang) -> Built:
    check_sample(sample)
    b = Built(sample, lang)
    for number, step in zip(numbered(sample.plan), sample.plan, strict=True):
        b.steps.append(f"{number} {step.en if lang == 'en' else step.zh}")
        if isinstance(step.tool, Call):
            b.tools.append(step.tool.render(lang))
        else:
            b.tools.append(PARENT if step.tool == NULL else TOOL_FREE[lang])
    return b


def raw_record(b: Built) -> dict[str, Any]:
    return {
        "question": b.sample.question(b.lang),
        "plan": [{"step": s, "tool": t} for s, t in zip(b.steps, b.tools, strict=True)],
        "tools": [b.skeleton(n) for n in b.sample.tools],
        "domain": b.sample.domain,
    }


def _calls(b: Built) -> list[tuple[int, Call]]:
    return [(i, s.tool) for i, s in enumerate(b.sample.plan) if isinstance(s.tool, Call)]


def planning(b: Built) -> dict[str, Any]:
    return {"input": b.sample.question(b.lang), "reference": "\n".join(b.steps)}


def tool_usage_awareness(b: Built) -> dict[str, Any]:
    """Every step but the top-level ``null`` ones is asked: "1" = it calls a tool."""
    inputs, reference = [], []
    for step, spec in zip(b.steps, b.sample.plan, strict=True):
        if spec.tool == NULL:
            inputs.append({"step": step})
            continue
        inputs.append({"step": step, "tool": ""})
        reference.append({"step": step, "tool": "1" if isinstance(spec.tool, Call) else "0"})
    return {"input": inputs, "reference": reference}


def _ask_calls(b: Built, asked: set[int]) -> list[dict[str, str]]:
    return [{"step": s, "tool": ""} if i in asked else {"step": s} for i, s in enumerate(b.steps)]


def _sorted_toolset(b: Built, names: list[str]) -> list[dict[str, Any]]:
    return [b.skeleton(n) for n in sorted(names)]


def _fill(base: list[str], pool: tuple[str, ...], size: int, what: str) -> list[str]:
    extra = [n for n in pool if n not in base][: size - len(base)]
    if len(base) + len(extra) != size:
        raise ValueError(f"not enough tools to fill the {what} toolset of {base}")
    return base + extra


def tool_selection(b: Built) -> dict[str, Any]:
    """Tool-call steps ask for a tool name; toolset = the sample's tools + look-alikes (8)."""
    calls = _calls(b)
    names = _fill(list(b.sample.tools), b.sample.distractors, TOOLSET_SIZE, "selection")
    return {
        "input": _ask_calls(b, {i for i, _ in calls}),
        "toolset": _sorted_toolset(b, names),
        "reference": [{"step": b.steps[i], "tool": c.name} for i, c in calls],
    }


def tool_creation_awareness(b: Built) -> dict[str, Any]:
    """Tool-call steps ask whether a tool must be created: "1" when it is missing from the
    toolset (the sample's remaining tools + others, 8 in all)."""
    calls = _calls(b)
    kept = [n for n in b.sample.tools if n not in b.sample.missing]
    names = _fill(kept, b.sample.distractors, TOOLSET_SIZE, "creation awareness")
    return {
        "input": _ask_calls(b, {i for i, _ in calls}),
        "toolset": _sorted_toolset(b, names),
        "reference": [{"step": b.steps[i], "tool": "1" if c.name in b.sample.missing else "0"}
                      for i, c in calls],
    }


def tool_creation(b: Built, index: int) -> dict[str, Any]:
    """The ``created`` tools are removed; only the first step calling each one is asked.
    Toolset = the remaining tools + unrelated ones, 2 in all."""
    first: dict[str, int] = {}
    for i, c in _calls(b):
        if c.name in b.sample.created:
            first.setdefault(c.name, i)
    asked = sorted(first.values())
    tool_of = {i: name for name, i in first.items()}
    kept = [n for n in b.sample.tools if n not in b.sample.created][:CREATION_TOOLSET_SIZE]
    rotation = UNRELATED[2 * index % len(UNRELATED):] + UNRELATED[: 2 * index % len(UNRELATED)]
    names = _fill(kept, rotation, CREATION_TOOLSET_SIZE, "creation")
    return {
        "input": _ask_calls(b, set(asked)),
        "toolset": _sorted_toolset(b, names),
        "reference": [{"step": b.steps[i], "tool": b.skeleton(tool_of[i])} for i in asked],
    }


def tool_usage(b: Built) -> dict[str, Any]:
    """Every tool-call step asks for its arguments; the tool name is given."""
    calls = dict(_calls(b))
    inputs: list[dict[str, str]] = []
    for i, step in enumerate(b.steps):
        inputs.append({"step": step, "tool": calls[i].name, "param": ""} if i in calls
                      else {"step": step})
    return {
        "question": b.sample.question(b.lang),
        "input": inputs,
        "toolset": [b.skeleton(n) for n in b.sample.tools],
        "reference": [{"step": b.steps[i], "tool": c.name, "param": c.params(b.lang)}
                      for i, c in calls.items()],
    }


def task_record(task: str, b: Built, index: int) -> dict[str, Any]:
    if task == "planning":
        return planning(b)
    if task == "tool_usage_awareness":
        return tool_usage_awareness(b)
    if task == "tool_selection":
        return tool_selection(b)
    if task == "tool_creation_awareness":
        return tool_creation_awareness(b)
    if task == "tool_creation":
        return tool_creation(b, index)
    if task == "tool_usage":
        return tool_usage(b)
    raise ValueError(task)


def _jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def ultratool_files() -> dict[str, str]:
    files: dict[str, str] = {}
    for lang in LANGS:
        root = f"ultratool/data/{LANG_DIRS[lang]}"
        built = [build_sample(s, lang) for s in SAMPLES]
        files[f"{root}/test.json"] = _jsonl([raw_record(b) for b in built])
        for task in TASKS:
            records = [task_record(task, b, i) for i, b in enumerate(built)]
            files[f"{root}/test_set/{task}.json"] = _jsonl(records)
            demo = task_record(task, build_sample(DEMO, lang), len(SAMPLES))
            files[f"{root}/example/{task}.json"] = json.dumps(demo, ensure_ascii=False,
                                                              indent=4) + "\n"
    return files


# --------------------------------------------------------------------------------------------
# AppBench
# --------------------------------------------------------------------------------------------

RESULTS: dict[tuple[str, str], tuple[str, ...]] = {
    # Returned arguments of the catalog APIs used below, in the catalog's order.
    ("Hotels", "bookhouse"): ("where_to", "number_of_adults", "check_in_date", "check_out_date",
                              "rating", "address", "phone_number", "total_price",
                              "has_laundry_service"),
    ("Hotels", "searchhouse"): ("where_to", "number_of_adults", "rating", "address",
                                "phone_number", "total_price", "has_laundry_service"),
    ("Rents", "getcarsavailable"): ("car_type", "car_name", "pickup_location", "start_date",
                                    "pickup_time", "city", "end_date", "price_per_day"),
    ("Rents", "reservecar"): ("car_type", "car_name", "pickup_location", "start_date",
                              "pickup_time", "end_date", "price_per_day", "add_insurance"),
    ("Rents", "getride"): ("destination", "ride_type", "ride_fare", "wait_time",
                           "number_of_seats"),
    ("Buses", "findbus"): ("from_city", "to_city", "from_station", "to_station", "departure_date",
                           "departure_time", "price", "num_passengers", "category"),
    ("Buses", "buybusticket"): ("from_city", "to_city", "from_station", "to_station",
                                "departure_date", "departure_time", "price", "additional_luggage",
                                "num_passengers", "category"),
    ("Events", "findevents"): ("event_type", "event_name", "date", "time", "price_per_ticket",
                               "city", "venue", "venue_address"),
    ("Events", "buyeventtickets"): ("event_name", "date", "time", "number_of_tickets",
                                    "price_per_ticket", "city", "venue", "venue_address"),
    ("Flights", "searchonewayflight"): ("number_of_tickets", "seating_class", "origin_airport",
                                        "destination_airport", "departure_date", "is_nonstop",
                                        "outbound_departure_time", "outbound_arrival_time",
                                        "price", "airlines"),
    ("Homes", "findhomebyarea"): ("intent", "area", "address", "property_name", "phone_number",
                                  "has_garage", "in_unit_laundry", "price", "number_of_beds",
                                  "number_of_baths"),
    ("Homes", "schedulevisit"): ("address", "property_name", "phone_number", "has_garage",
                                 "in_unit_laundry", "price", "visit_date", "number_of_beds",
                                 "number_of_baths"),
    ("Media", "findmovies"): ("title", "genre", "subtitle_language", "starring"),
    ("Media", "playmovie"): ("title", "genre", "subtitle_language", "starring"),
    ("Movies", "buymovietickets"): ("price", "number_of_tickets", "show_type", "theater_name",
                                    "show_time", "show_date", "genre", "street_address",
                                    "location", "movie_name"),
    ("Movies", "findmovies"): ("price", "show_type", "theater_name", "genre", "street_address",
                               "location", "movie_name"),
    ("Movies", "gettimesformovie"): ("price", "show_type", "theater_name", "show_time",
                                     "show_date", "genre", "street_address", "location",
                                     "movie_name"),
    ("Music", "playmedia"): ("track", "artist", "album", "genre", "year", "device"),
    ("Music", "lookupmusic"): ("track", "artist", "album", "genre", "year"),
    ("Payment", "makepayment"): ("payment_method", "amount", "receiver", "private_visibility"),
    ("Restaurants", "reserverestaurant"): ("restaurant_name", "date", "time",
                                           "has_seating_outdoors", "has_vegetarian_options",
                                           "phone_number", "rating", "address",
                                           "number_of_seats", "price_range", "location",
                                           "category"),
    ("Restaurants", "findrestaurants"): ("restaurant_name", "has_seating_outdoors",
                                         "has_vegetarian_options", "phone_number", "rating",
                                         "address", "price_range", "location", "category"),
    ("Services", "find_stylist_provider"): ("stylist_name", "phone_number", "average_rating",
                                            "is_unisex", "street_address", "city"),
    ("Services", "book_therapist_appointment"): ("therapist_name", "phone_number", "address",
                                                 "appointment_date", "appointment_time"),
    ("Services", "find_therapist_provider"): ("therapist_name", "phone_number", "address",
                                              "city", "type"),
    ("Trains", "findtrains"): ("from", "to", "from_station", "to_station", "date_of_journey",
                               "journey_start_time", "total", "number_of_adults", "class",
                               "trip_protection"),
    ("Travel", "findattractions"): ("location", "attraction_name", "category", "phone_number",
                                    "free_entry", "good_for_kids"),
    ("Weather", "getweather"): ("precipitation", "humidity", "wind", "temperature", "city",
                                "date"),
}


@dataclass(frozen=True)
class Dep:
    """A dependent argument ``#k=k``: the value returned by an earlier call as ``k``.
    ``value`` is the concrete value ``used_api`` records for it."""

    value: str


@dataclass(frozen=True)
class AppSample:
    input: str
    calls: tuple[tuple[str, str, dict[str, str | Dep]], ...]


def A(text: str, *calls: tuple[str, str, dict[str, str | Dep]]) -> AppSample:
    return AppSample(text, calls)


def app_output(sample: AppSample) -> dict[str, Any]:
    """The official ``output`` object of a sample."""
    used_app: list[str] = []
    used_api: list[dict[str, dict[str, str]]] = []
    result_arguments: list[list[str]] = []
    api_results: list[str] = []
    middle: list[str] = []
    aware: dict[str, str] = {}
    returned: set[str] = set()
    for app, api, args in sample.calls:
        results = RESULTS[(app, api)]
        parts, concrete = [], {}
        for key in sorted(args):
            value = args[key]
            if isinstance(value, Dep):
                if key not in returned:
                    raise ValueError(f"{api}: #{key} depends on no earlier call")
                parts.append(f"#{key}={key}")
                concrete[key] = value.value
            else:
                if aware.get(key, value) != value:
                    raise ValueError(f"{api}: user-aware {key!r} has two values")
                parts.append(f"#{key}='{value}'")
                concrete[key] = value
                aware[key] = value
        used_app.append(app)
        used_api.append({api: concrete})
        result_arguments.append(list(results))
        api_results.append(f"{', '.join(results)} = {api}({', '.join(parts)})")
        middle += [r for r in results if r not in middle]
        returned |= set(results)
    return {
        "used_app": used_app,
        "used_api": used_api,
        "result_arguments": result_arguments,
        "api_results": api_results,
        "middle_arguments": middle,
        "user_aware_arguments": aware,
    }


APPBENCH: dict[str, list[AppSample]] = {
    "ss": [
        A("What will the weather be like in Seattle on March 7th?",
          ("Weather", "getweather", {"city": "Seattle", "date": "2019-03-07"})),
        A("Can you find me a moderately priced Italian restaurant in San Jose?",
          ("Restaurants", "findrestaurants",
           {"category": "Italian", "location": "San Jose", "price_range": "moderate"})),
        A("I'm taking my kids to Chicago. Which museums there are good for children?",
          ("Travel", "findattractions",
           {"category": "Museum", "good_for_kids": "True", "location": "Chicago"})),
        A("Send $45 to Jessica from my debit card.",
          ("Payment", "makepayment",
           {"amount": "45", "payment_method": "debit card", "receiver": "Jessica"})),
        A("Play Northern Lanterns by Mira Solen on the kitchen speaker.",
          ("Music", "playmedia",
           {"artist": "Mira Solen", "device": "Kitchen", "track": "Northern Lanterns"})),
        A("Look for business class one-way flights from Dallas to Phoenix on March 19th.",
          ("Flights", "searchonewayflight",
           {"departure_date": "2019-03-19", "destination_airport": "Phoenix",
            "origin_airport": "Dallas", "seating_class": "Business"})),
    ],
    "sm": [
        A("Find a Thai restaurant in Oakland and book a table for 4 there at 7 pm on March 8th.",
          ("Restaurants", "findrestaurants", {"category": "Thai", "location": "Oakland"}),
          ("Restaurants", "reserverestaurant",
           {"date": "2019-03-08", "location": Dep("Oakland"), "number_of_seats": "4",
            "restaurant_name": Dep("Bangkok Garden House"), "time": "19:00"})),
        A("I want to see The Quiet Harbor in Berkeley on March 12th. Check the showtimes and get "
          "me 2 tickets for the first show.",
          ("Movies", "gettimesformovie",
           {"location": "Berkeley", "movie_name": "The Quiet Harbor", "show_date": "2019-03-12"}),
          ("Movies", "buymovietickets",
           {"location": Dep("Berkeley"), "movie_name": Dep("The Quiet Harbor"),
            "number_of_tickets": "2", "show_date": Dep("2019-03-12"),
            "show_time": Dep("17:45"), "show_type": Dep("regular")})),
        A("I'd like to rent a place in Sunnyvale with 2 bedrooms and 1 bathroom. Find one and "
          "schedule a visit for March 15th.",
          ("Homes", "findhomebyarea",
           {"area": "Sunnyvale", "intent": "rent", "number_of_baths": "1",
            "number_of_beds": "2"}),
          ("Homes", "schedulevisit",
           {"property_name": Dep("Maple Court Apartments"), "visit_date": "2019-03-15"})),
        A("Find a psychologist in Fremont and book me an appointment on March 6th at 10:30 am.",
          ("Services", "find_therapist_provider", {"city": "Fremont", "type": "Psychologist"}),
          ("Services", "book_therapist_appointment",
           {"appointment_date": "2019-03-06", "appointment_time": "10:30",
            "therapist_name": Dep("Dr. Helen Okafor")})),
        A("Find a bus from Sacramento to Fresno for 2 people on March 10th and buy the tickets, "
          "no extra luggage.",
          ("Buses", "findbus",
           {"departure_date": "2019-03-10", "from_city": "Sacramento", "num_passengers": "2",
            "to_city": "Fresno"}),
          ("Buses", "buybusticket",
           {"additional_luggage": "False", "departure_date": Dep("2019-03-10"),
            "departure_time": Dep("08:40"), "from_city": Dep("Sacramento"),
            "num_passengers": Dep("2"), "to_city": Dep("Fresno")})),
    ],
    "ms": [
        A("Find me a concert in Portland on March 16th and tell me what the weather will be like "
          "there that day.",
          ("Events", "findevents", {"city": "Portland", "date": "2019-03-16",
                                    "event_type": "Music"}),
          ("Weather", "getweather", {"city": Dep("Portland"), "date": Dep("2019-03-16")})),
        A("Look for a Mexican restaurant in Sacramento, and an attraction with free entry in "
          "the same city.",
          ("Restaurants", "findrestaurants", {"category": "Mexican", "location": "Sacramento"}),
          ("Travel", "findattractions", {"free_entry": "True", "location": Dep("Sacramento")})),
        A("I need a unisex hair salon in San Diego. Also, how's the weather there on March 5th?",
          ("Services", "find_stylist_provider", {"city": "San Diego", "is_unisex": "True"}),
          ("Weather", "getweather", {"city": Dep("San Diego"), "date": "2019-03-05"})),
        A("Book a house in Denver for 2 adults from March 18th to March 22nd, and look up trains "
          "from Kansas City to Denver on the 18th for the same number of people.",
          ("Hotels", "bookhouse",
           {"check_in_date": "2019-03-18", "check_out_date": "2019-03-22",
            "number_of_adults": "2", "where_to": "Denver"}),
          ("Trains", "findtrains",
           {"date_of_journey": "2019-03-18", "from": "Kansas City",
            "number_of_adults": Dep("2"), "to": "Denver"})),
        A("Find a kid-friendly museum in Los Angeles, then see which animated movies are showing "
          "in that city.",
          ("Travel", "findattractions",
           {"category": "Museum", "good_for_kids": "True", "location": "Los Angeles"}),
          ("Movies", "findmovies", {"genre": "Animation", "location": Dep("Los Angeles")})),
        A("Is there a basketball game in Chicago on March 23rd? Check the weather for it, and "
          "find a steakhouse in Chicago too.",
          ("Events", "findevents", {"city": "Chicago", "date": "2019-03-23",
                                    "event_type": "Sports"}),
          ("Weather", "getweather", {"city": Dep("Chicago"), "date": Dep("2019-03-23")}),
          ("Restaurants", "findrestaurants", {"category": "Steakhouse", "location": "Chicago"})),
    ],
    "mm": [
        # A chain of 3: search -> reserve -> ride (the ride takes the party size of the table).
        A("Find a Japanese restaurant in Palo Alto, reserve a table for 2 there at 7:30 pm on "
          "March 14th, and afterwards get us a regular ride to Palo Alto Caltrain Station.",
          ("Restaurants", "findrestaurants", {"category": "Japanese", "location": "Palo Alto"}),
          ("Restaurants", "reserverestaurant",
           {"date": "2019-03-14", "location": Dep("Palo Alto"), "number_of_seats": "2",
            "restaurant_name": Dep("Hinoki House"), "time": "19:30"}),
          ("Rents", "getride",
           {"destination": "Palo Alto Caltrain Station", "number_of_seats": Dep("2"),
            "ride_type": "Regular"})),
        # Two independent components (parallel scale 2).
        A("Get me 3 tickets for the 3d showing of Starfall Express in San Francisco on March "
          "10th, and meanwhile find some jazz and play it in the living room.",
          ("Movies", "gettimesformovie",
           {"location": "San Francisco", "movie_name": "Starfall Express",
            "show_date": "2019-03-10", "show_type": "3d"}),
          ("Movies", "buymovietickets",
           {"location": Dep("San Francisco"), "movie_name": Dep("Starfall Express"),
            "number_of_tickets": "3", "show_date": Dep("2019-03-10"),
            "show_time": Dep("20:15"), "show_type": Dep("3d")}),
          ("Music", "lookupmusic", {"genre": "Jazz"}),
          ("Music", "playmedia", {"device": "Living room", "track": Dep("Blue Harbor Nights")})),
        # One search feeding two calls.
        A("Rent an SUV in San Diego from March 22nd to March 24th, picked up at 10 am, with "
          "insurance, and tell me the weather in that city on the 22nd.",
          ("Rents", "getcarsavailable",
           {"car_type": "SUV", "city": "San Diego", "end_date": "2019-03-24",
            "pickup_time": "10:00", "start_date": "2019-03-22"}),
          ("Rents", "reservecar",
           {"add_insurance": "True", "car_type": Dep("SUV"), "end_date": Dep("2019-03-24"),
            "pickup_location": Dep("Santa Fe Depot"), "pickup_time": Dep("10:00"),
            "start_date": Dep("2019-03-22")}),
          ("Weather", "getweather", {"city": Dep("San Diego"), "date": "2019-03-22"})),
        A("I want to buy a house in Mountain View with 3 bedrooms, 2 bathrooms and a garage. "
          "Find one and schedule a visit on March 9th, and check the weather there that day.",
          ("Homes", "findhomebyarea",
           {"area": "Mountain View", "has_garage": "True", "intent": "buy",
            "number_of_baths": "2", "number_of_beds": "3"}),
          ("Homes", "schedulevisit",
           {"property_name": Dep("Cedar Grove Residences"), "visit_date": "2019-03-09"}),
          ("Weather", "getweather", {"city": "Mountain View", "date": "2019-03-09"})),
        A("Search one-way flights from Chicago to Boston on March 25th, and find a house in "
          "Boston for 1 person and book it from the 25th to the 28th.",
          ("Flights", "searchonewayflight",
           {"departure_date": "2019-03-25", "destination_airport": "Boston",
            "origin_airport": "Chicago"}),
          ("Hotels", "searchhouse", {"number_of_adults": "1", "where_to": "Boston"}),
          ("Hotels", "bookhouse",
           {"check_in_date": "2019-03-25", "check_out_date": "2019-03-28",
            "number_of_adults": Dep("1"), "where_to": Dep("Boston")})),
    ],
}


def appbench_files() -> dict[str, str]:
    return {
        f"appbench/data/test/test_{cat}.json": json.dumps(
            [{"input": s.input, "output": app_output(s)} for s in samples],
            ensure_ascii=False, indent=4) + "\n"
        for cat, samples in APPBENCH.items()
    }


# --------------------------------------------------------------------------------------------


def build() -> dict[str, str]:
    """Every generated file: path relative to ``datasets/`` -> text."""
    return {**ultratool_files(), **appbench_files()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true",
                        help="compare with the files on disk instead of writing them")
    parser.add_argument("--out", type=Path, default=HERE, help="output directory (datasets/)")
    args = parser.parse_args(argv)
    stale = []
    for rel, text in build().items():
        path = args.out / rel
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date:", *stale, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
