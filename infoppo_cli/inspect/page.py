"""``index.html``: one self-contained page (no network): every response with its tokens coloured by rho,
a tooltip per token (entropy, rho, clip bounds, Gamma_info), a small plot of Gamma_info(0, t) and of the
clip bounds along the response, and a sortable list of responses (mean rho, length, correctness)."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

import torch

from infoppo_cli.inspect.clock import discount_text
from infoppo_cli.inspect.tokens import Inspected
from infoppo_cli.rundir.weights import short

PAGE_RESPONSES = 200
"""Responses shown on the page (the first ones of the file); tokens.parquet has them all."""
PLOT_POINTS = 300

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222}
table{border-collapse:collapse}th,td{padding:2px 10px;text-align:right}th{cursor:pointer;background:#eee}
td:first-child,th:first-child{text-align:left}section{border-top:1px solid #ccc;margin-top:1.5em}
.text{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:13px;line-height:1.7}
.t{border-radius:2px}#tip{position:fixed;display:none;background:#222;color:#fff;padding:4px 8px;
border-radius:4px;font:12px ui-monospace,monospace;pointer-events:none;white-space:pre;z-index:9}
.plots{display:flex;gap:2em}.plots figure{margin:0}figcaption{font-size:12px;color:#555}
.legend span{display:inline-block;width:3em;text-align:center}
"""

_SCRIPT = """
const tip=document.getElementById('tip');
function f(x){return Number(x).toFixed(4)}
function g(x){x=Number(x);const gap=1-x;if(!(gap>0)||!(x>0))return String(x);
 if(gap>=0.1)return String(Number(x.toPrecision(3)));
 return x.toFixed(Math.max(3,Math.ceil(-Math.log10(gap)-1e-9)+1)).replace(/0+$/,'')}
document.querySelectorAll('.t').forEach(el=>{
 el.addEventListener('mouseenter',()=>{const d=el.dataset;
  let s='H '+f(d.h)+' nats\\nrho '+f(d.r)+'\\nclip ['+f(d.l)+', '+f(d.u)+']\\nGamma_info(0,t) '+g(d.g);
  if(d.d!==undefined)s+='\\ndrift dH '+f(d.d);tip.textContent=s;tip.style.display='block'});
 el.addEventListener('mousemove',e=>{tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px'});
 el.addEventListener('mouseleave',()=>{tip.style.display='none'})});
document.querySelectorAll('#list th').forEach((th,col)=>th.addEventListener('click',()=>{
 const body=document.querySelector('#list tbody');const rows=[...body.rows];
 const up=th.dataset.dir!=='asc';th.dataset.dir=up?'asc':'desc';
 const key=r=>{const c=r.cells[col];return c.dataset.v!==undefined?Number(c.dataset.v):c.textContent};
 rows.sort((a,b)=>{const x=key(a),y=key(b);return (x<y?-1:x>y?1:0)*(up?1:-1)});
 rows.forEach(r=>body.appendChild(r))}));
"""


def colour(rho: float) -> str:
    """White at rho = 0 to saturated orange-red at rho = 1."""
    return f"hsl(18,95%,{100 - 48 * min(max(rho, 0.0), 1.0):.0f}%)"


def _fmt(value: float) -> str:
    return f"{value:.9g}"  # every digit of a float32: Γ_info within 1e-7 of 1 still reads below 1


def _tokens_html(response: Inspected) -> str:
    c, other = response.clock, response.compared
    spans = []
    for t, text in enumerate(response.tokens):
        rho = float(c.rho[t])
        data = (
            f'data-h="{_fmt(c.entropy[t])}" data-r="{_fmt(rho)}" data-l="{_fmt(c.clip_low[t])}" '
            f'data-u="{_fmt(c.clip_high[t])}" data-g="{_fmt(c.gamma_info[t])}"'
        )
        if other is not None:
            data += f' data-d="{_fmt(other.entropy[t] - c.entropy[t])}"'
        spans.append(f'<span class="t" style="background:{colour(rho)}" {data}>{html.escape(text)}</span>')
    return "".join(spans)


def _polyline(values: torch.Tensor, low: float, high: float, colour_name: str) -> str:
    n = len(values)
    step = max(1, n // PLOT_POINTS)
    index = list(range(0, n, step)) + ([n - 1] if (n - 1) % step else [])
    span = (high - low) or 1.0
    points = " ".join(
        f"{300 * i / max(n - 1, 1):.1f},{90 - 80 * (float(values[i]) - low) / span:.1f}" for i in index
    )
    return f'<polyline fill="none" stroke="{colour_name}" stroke-width="1.5" points="{points}"/>'


def _plot(lines: list[str], caption: str, low: str, high: str) -> str:
    """An SVG plot of ``lines`` with its top and bottom values written as ``high`` and ``low``."""
    axis = f'<text x="2" y="10" font-size="9">{high}</text><text x="2" y="98" font-size="9">{low}</text>'
    return (
        f'<figure><svg width="300" height="100" viewBox="0 0 300 100" style="background:#fafafa">'
        f"{''.join(lines)}{axis}</svg><figcaption>{caption}</figcaption></figure>"
    )


def _plots(response: Inspected) -> str:
    c = response.clock
    if len(c.rho) == 0:
        return ""
    floor = min(float(c.gamma_info.min()), 1.0 - 1e-6)  # the curve's own range, so its shape shows
    caption = "Γ<sub>info</sub>(0,t) along the response"
    gamma = _plot([_polyline(c.gamma_info, floor, 1.0, "#7b3294")], caption, discount_text(floor), "1")
    low, high = float(c.clip_low.min()), float(c.clip_high.max())
    bounds = [_polyline(c.clip_high, low, high, "#d7301f"), _polyline(c.clip_low, low, high, "#0570b0")]
    clip = _plot(bounds, "clip bounds: upper (red), lower (blue)", f"{low:.3g}", f"{high:.3g}")
    return f'<div class="plots">{gamma}{clip}</div>'


def _mean_rho(response: Inspected) -> float:
    return float(response.clock.rho.mean()) if len(response.tokens) else 0.0


def _correct_cell(response: Inspected) -> str:
    if response.correct is None:
        return '<td data-v="-1">–</td>'
    return f'<td data-v="{int(response.correct)}">{"yes" if response.correct else "no"}</td>'


def _list(responses: Sequence[Inspected]) -> str:
    rows = "".join(
        f'<tr><td><a href="#r{i}">{html.escape(r.id)}</a></td>'
        f'<td data-v="{_mean_rho(r):.6f}">{_mean_rho(r):.3f}</td>'
        f'<td data-v="{len(r.tokens)}">{len(r.tokens)}</td>'
        f'<td data-v="{r.clock.discount:.9g}">{discount_text(r.clock.discount)}</td>{_correct_cell(r)}</tr>'
        for i, r in enumerate(responses)
    )
    head = "<th>response</th><th>mean ρ</th><th>tokens</th><th>Γ<sub>info</sub>(0,T)</th><th>correct</th>"
    return f'<table id="list"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _section(index: int, r: Inspected) -> str:
    verdict = "" if r.correct is None else (" · correct" if r.correct else " · wrong")
    return (
        f'<section id="r{index}" class="response" data-id="{html.escape(r.id)}"><h3>{html.escape(r.id)}</h3>'
        f"<p>{len(r.tokens)} tokens · mean ρ {_mean_rho(r):.3f} · "
        f"Γ<sub>info</sub>(0,T) {discount_text(r.clock.discount)}"
        f'{verdict}</p>{_plots(r)}<div class="text">{_tokens_html(r)}</div></section>'
    )


def render_page(responses: Sequence[Inspected], summary: dict[str, object]) -> str:
    """The whole page as one string (inline CSS, JavaScript and SVG; nothing is fetched)."""
    shown = responses[:PAGE_RESPONSES]
    note = (
        f"<p>Showing the first {len(shown)} of {len(responses)} responses; tokens.parquet has them all.</p>"
        if len(shown) < len(responses)
        else ""
    )
    legend = "".join(f'<span style="background:{colour(x / 4)}">{x / 4:.2f}</span>' for x in range(5))
    settings = html.escape(json.dumps(summary.get("settings", {})))
    warnings = "".join(f"<p><b>warning:</b> {html.escape(str(w))}</p>" for w in summary.get("warnings") or [])
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>infoppo inspect</title>'
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>Information clock of {html.escape(str(summary.get('model')))}</h1>"
        f"<p>weights {html.escape(short(summary.get('weights_fingerprint')))}</p>"
        f'<p class="legend">token colour = ρ: {legend} · hover a token for its numbers</p>'
        f"<p><code>{settings}</code></p>{warnings}{note}{_list(shown)}"
        f'{"".join(_section(i, r) for i, r in enumerate(shown))}<div id="tip"></div>'
        f"<script>{_SCRIPT}</script></body></html>"
    )
