"""The features: each module owns its commands, buttons, forms and timers."""
