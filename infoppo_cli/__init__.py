"""infoppo: Information-Time PPO for LLM reasoning, on OpenRLHF's Ray PPO trainer.

Reference: the method is InfoPPO, from the paper *Information-Time PPO (InfoPPO)*. This docstring is
the package's one citation of it; elsewhere the code names the part it follows: InfoPPO's
information-time GAE (the recursion for Â_t, ``infotime.py``), its entropy-adaptive clip bounds, its
defaults (γ, λ, ε_low, ε_high and the batch normalisation of ρ, ``presets/methods.toml``), its
training and evaluation protocol, its Figure 2 (the highest- and lowest-entropy tokens), its
accuracy-over-steps figures and its γ and λ ablation grids.
"""

__version__ = "0.1.0"
