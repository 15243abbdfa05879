"""The foundation every part stands on: the events and replies, errors, the clock, command declarations,
settings, YAML reading and checking, and logs."""
