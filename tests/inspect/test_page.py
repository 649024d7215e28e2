"""index.html in a real headless browser (Debian's chromium driven by Playwright): every response renders
with its coloured tokens and a hovered token's tooltip shows its numbers from tokens.parquet."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from infoppo_cli.inspect.run import InspectSettings, run_inspect

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


def _chromium() -> str:
    pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')"
    )
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("no system chromium (scripts/install.sh installs Debian's chromium when run as root)")
    return found


@pytest.fixture(scope="module")
def page_dir(tmp_path_factory, sharp_model, plain_model):
    from inspect_fixtures import response_rows, write_jsonl

    root = tmp_path_factory.mktemp("page")
    responses = write_jsonl(root / "samples.jsonl", response_rows(6))
    settings = InspectSettings(
        str(sharp_model), str(responses), compare=str(plain_model), min_count=3, top=10
    )
    run_inspect(settings, root / "out", lambda *_: None)
    return root / "out"


@pytest.mark.slow
def test_page_renders_every_response_and_tooltips(page_dir, tmp_path):
    from playwright.sync_api import sync_playwright

    executable = _chromium()
    table = pq.read_table(page_dir / "tokens.parquet").to_pylist()
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        requests = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto((page_dir / "index.html").as_uri())
        sections = page.locator("section.response")
        assert sections.count() == 6
        for index in range(6):
            section = sections.nth(index)
            rid = section.get_attribute("data-id")
            tokens = section.locator(".t")
            assert tokens.count() == sum(1 for row in table if row["id"] == rid)
        backgrounds = page.eval_on_selector_all(
            ".t", "els => els.map(e => getComputedStyle(e).backgroundColor)"
        )
        assert len(set(backgrounds)) > 10 and "rgba(0, 0, 0, 0)" not in backgrounds

        row = next(r for r in table if r["id"] == "q2" and r["position"] == 3)
        token = page.locator('section[data-id="q2"] .t').nth(3)
        token.scroll_into_view_if_needed()
        token.hover()
        tip = page.locator("#tip")
        assert tip.is_visible()
        text = tip.inner_text()
        fixed_places = re.sub(r"Gamma_info\(0,t\) \S+", "", text)  # its digits vary, read below
        numbers = [float(x) for x in re.findall(r"-?\d+\.\d{4}\b", fixed_places)]
        want = [row[k] for k in ("entropy", "rho", "clip_low", "clip_high", "entropy_drift")]
        assert numbers == pytest.approx(want, abs=1.5e-4), text
        gamma = re.search(r"Gamma_info\(0,t\) (\S+)", text).group(1)  # digits enough to differ from 1
        assert float(gamma) == pytest.approx(row["gamma_info"], abs=0.06 * (1 - row["gamma_info"]) + 1e-7)
        assert text.startswith("H ") and "rho " in text and "clip [" in text and "drift dH" in text

        page.locator("#list th").nth(1).click()  # sort by mean rho, ascending
        shown = [
            float(v)
            for v in page.eval_on_selector_all(
                "#list tbody tr td:nth-child(2)", "e => e.map(x => x.dataset.v)"
            )
        ]
        assert shown == sorted(shown)
        assert all(url.startswith("file:") for url in requests)  # no network

        page.mouse.move(0, 0)
        token.hover()
        page.screenshot(path=str(tmp_path / "inspect_page.png"))
        if os.environ.get("INFOPPO_UPDATE_DOCS") == "1":
            DOCS_IMG.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOCS_IMG / "inspect_page.png"))
        browser.close()
    assert (tmp_path / "inspect_page.png").stat().st_size > 10_000


def test_gamma_near_one_is_not_rounded_to_one_on_the_page():
    import torch

    from infoppo_cli.inspect.clock import Clock
    from infoppo_cli.inspect.page import render_page
    from infoppo_cli.inspect.tokens import Inspected

    n = 4
    gamma = torch.tensor([1.0, 0.99999, 0.99995, 0.99990])
    clock = Clock(
        torch.ones(n), torch.full((n,), 0.01), gamma, torch.full((n,), 0.8), torch.full((n,), 1.3), 0.99987
    )
    page = render_page([Inspected("q0", ["a", "b", "c", "d"], clock)], {"model": "m", "settings": {}})
    assert ">0.99987</td>" in page and "Γ<sub>info</sub>(0,T) 0.99987" in page
    low_label = re.search(r'<text x="2" y="98" font-size="9">([^<]*)</text>', page).group(1)
    assert low_label != "1" and float(low_label) < 1
    assert 'data-g="0.999899983"' in page  # the tooltip's data keep every digit of a float32
