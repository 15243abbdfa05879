"""What runs the features: the router, the context each handler is given, the timer scheduler and the
metrics."""
