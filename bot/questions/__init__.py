"""Question types: `base` says what a type provides, one module per type implements it, and
`registry` maps each YAML `type:` to its module."""
