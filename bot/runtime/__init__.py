"""What runs the features, above them: the router (`app`), the timer scheduler, delivery and the
metrics."""
