"""Training data: DAPO-Math-17K preparation and the prompt templates shared with evaluation."""
