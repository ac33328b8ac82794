"""Generation backends, GRPO training and the standalone eval."""
