"""An OpenAI-compatible chat-completions client for annotation, detection and judging."""
