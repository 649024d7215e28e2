"""Fixtures shared by the report tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def drawn_figures(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every matplotlib figure the report saves, kept for inspection."""
    import infoppo_cli.report.bar_figures as bar_figures
    import infoppo_cli.report.figures as figures

    kept = []
    save = figures.save_figure

    def keep(figure, stem, formats):
        kept.append((stem.name, figure))
        return save(figure, stem, formats)

    monkeypatch.setattr(figures, "save_figure", keep)
    monkeypatch.setattr(bar_figures, "save_figure", keep)
    return kept
