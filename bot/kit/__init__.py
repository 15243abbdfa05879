"""What the features stand on: the context every handler is given, and the declarations a feature
makes of itself (commands, buttons, forms, timers, answering modes, offers, storage)."""
