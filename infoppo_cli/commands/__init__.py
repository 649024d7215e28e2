"""Thin Typer command modules; each delegates to a library module in ``infoppo_cli``."""
