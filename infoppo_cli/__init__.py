"""infoppo: Information-Time PPO for LLM reasoning, on OpenRLHF's Ray PPO trainer."""

__version__ = "0.1.0"
