"""Training: model presets, methods built from components, the resolved plan, and the run."""
