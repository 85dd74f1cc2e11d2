"""The room's join link, its QR code (decoded back with zxing-cpp) and the answers chart."""

from __future__ import annotations

import io
import ipaddress
from urllib.parse import parse_qsl, urlsplit

import pytest
from PIL import Image

from ui.common import room_charts, room_panel
from ui.common.charts import INK, ChartText

VALUES = {
    "d_k": 256,
    "dist": "normal",
    "lang": "zh",
    "seed": 7,
    "present": 1,
    "step": 2,
    "reveal": 1,
    "room": "ABCDEF",
    "learner": "x" * 16,
    "room_key": "k" * 43,
}


def test_the_join_link_carries_the_view_and_the_room_only():
    link = room_panel.join_link("https://lab.example.org/", "variance", VALUES, "ZX3Q7P")
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "lab.example.org", "/variance")
    query = dict(parse_qsl(parts.query))
    assert query == {"d_k": "256", "dist": "normal", "lang": "zh", "seed": "7", "room": "ZX3Q7P"}


@pytest.mark.parametrize(
    "link",
    [
        "http://192.168.1.20:8501/variance?d_k=64&room=ABCDEF",
        "https://attention-lab.streamlit.app/sqrt-vs-d?alpha=0.75&d_k=4096&lang=zh&n_keys=512"
        "&rho=0.5&seed=2147483647&room=Z9Z9Z9",
        "https://lab.example.org/?room=23456A",
    ],
)
def test_the_qr_code_decodes_back_to_the_join_link(link):
    import zxingcpp

    png = room_panel.qr_png(link)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(io.BytesIO(png)).convert("L")
    found = zxingcpp.read_barcodes(image)
    assert [(r.format, r.text) for r in found] == [(zxingcpp.BarcodeFormat.QRCode, link)]


def test_the_lan_address_is_a_private_ipv4_or_none():
    address = room_panel.lan_address()
    if address is not None:  # a machine without a route has none
        parsed = ipaddress.IPv4Address(address)
        assert not parsed.is_loopback


def test_answers_chart():
    df = room_charts.answers_frame(["1", "8", "64", "4096"], [3, 4, 0, 1], mine=1)
    assert df["share"].tolist() == [3 / 8, 4 / 8, 0.0, 1 / 8]  # exact: small binary fractions
    assert df["label"].tolist() == ["3 · 38%", "4 · 50%", "0 · 0%", "1 · 12%"]
    assert df["mine"].tolist() == [False, True, False, False]
    text = ChartText.of(
        title="The room's answers", subtitle="per option", subtitle_mine="yours in orange",
        x="answers", alt="d", tips={"option": "option", "share": "share"},
    )  # fmt: skip
    chart = room_charts.answers_chart(df, text, own=True)
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    assert spec["title"]["subtitle"] == "yours in orange"
    others = room_charts.answers_chart(df, text).to_dict()  # the presenter's view
    assert others["title"]["subtitle"] == "per option"
    bars, text = spec["layer"]
    assert bars["mark"]["type"] == "bar" and text["mark"]["type"] == "text"
    # the counts are text: in the theme's ink, not in a mark colour
    assert text["encoding"]["color"] == {"value": INK.to_dict()}
    assert bars["encoding"]["y"]["sort"] == {"field": "order"}
    assert [t["title"] for t in bars["encoding"]["tooltip"]] == ["option", "answers", "share"]
    assert all("format" in t for t in bars["encoding"]["tooltip"] if t["type"] == "quantitative")


def test_nobody_answered_yet():
    df = room_charts.answers_frame(["a", "b"], [0, 0])
    assert df["share"].tolist() == [0.0, 0.0] and not df["mine"].any()
    with pytest.raises(ValueError, match="2 labels but 3 counts"):
        room_charts.answers_frame(["a", "b"], [0, 0, 1])
