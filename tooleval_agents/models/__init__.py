"""The model under test: specs, offline models, the retry/cache/rate-limit wrapper, secrets, server
identity and tool calls written as text."""
