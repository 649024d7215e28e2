"""Sweeps: InfoPPO's ablation grids, the resumable sweep state, launchers and the runner."""
