"""Stand-ins for Slack and Discord on 127.0.0.1 that speak their wire protocols and record every
call, for the adapter tests and benchmarks (not shipped with the bot)."""
