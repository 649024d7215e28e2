"""Training data: DAPO-Math-17K preparation, the prompt templates shared with evaluation, and the
Hugging Face Hub access every command shares (``hub``)."""
